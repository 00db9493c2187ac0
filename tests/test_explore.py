"""``repro explore``: search, per-signature shrinking, boundary tables, findings that last.

Real runs only: every case is a child process through the engine's isolation.
The planted reproducer needs no Triton, so a case costs a fraction of a second.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

import pytest

from suite.children import Role, child_argv
from suite.cli import explore as explore_cli
from suite.cli.options import Parser
from suite.engine.discover import select
from suite.engine.isolate import Bounds
from suite.engine.runner import Execution
from suite.errors import HarnessError, UsageError
from suite.failures.findings import DirectoryFindingsStore, Finding
from suite.search.explore import Budget, Exploration, explore
from tests.conftest import repro_cli

SEED = 1
EXAMPLES = 30
PLANTED_BUG = "compiler-error: RuntimeError: planted bug"
SEGFAULT = "crash:SIGSEGV:compile"

TWO_BUGS = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="planted-two-bugs",
    title="A compile error and a segfault in one space",
    family="test",
    params=(
        Choice("BLOCK_K", (16, 32, 64, 128)),
        Choice("num_stages", (1, 2, 3, 4)),
        Choice("num_warps", (1, 2, 4, 8)),
    ),
    configs={},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    if case["BLOCK_K"] >= 64 and case["num_stages"] >= 3:
        raise RuntimeError("planted bug")
    if case["num_warps"] == 2:
        import ctypes

        ctypes.string_at(0)
    return Compiled(shared_bytes=0)
"""


@pytest.fixture
def two_bugs(tmp_path: Path) -> Path:
    path = tmp_path / "two_bugs.py"
    path.write_text(textwrap.dedent(TWO_BUGS))
    return path


def _explore(path: Path, output: Path, seed: int = SEED) -> Exploration:
    (found,) = select([str(path)])
    return explore(
        found,
        ["sm_90"],
        DirectoryFindingsStore(output / "findings"),
        Execution(bounds=Bounds(timeout_s=60)),
        output,
        Budget(max_examples=EXAMPLES),
        seed,
    )


def _by_signature(findings: list[Finding]) -> dict[str, Finding]:
    return {f.signature: f for f in findings}


def _walks(finding: Finding) -> dict[tuple[str, str], list[tuple[object, str]]]:
    """Each boundary walk as (value, 'same' | outcome) steps."""
    walks: dict[tuple[str, str], list[tuple[object, str]]] = {}
    for step in finding.boundary:
        verdict = "same" if step.same_signature else step.outcome
        walks.setdefault((step.param, step.direction), []).append((step.value_to, verdict))
    return walks


def _planted_signature(config: dict) -> str | None:
    if config["BLOCK_K"] >= 64 and config["num_stages"] >= 3:
        return PLANTED_BUG
    return SEGFAULT if config["num_warps"] == 2 else None


def _comparable(finding: Finding) -> dict:
    record = finding.to_json()
    del record["first_seen"], record["last_seen"]
    return record


def test_two_bugs_are_two_findings_each_shrunk_to_its_own_minimum(two_bugs, tmp_path):
    exploration = _explore(two_bugs, tmp_path / "out")
    findings = _by_signature(exploration.findings)
    assert sorted(findings) == sorted([PLANTED_BUG, SEGFAULT])

    error, crash = findings[PLANTED_BUG], findings[SEGFAULT]
    assert error.minimal_config == {"BLOCK_K": 64, "num_stages": 3, "num_warps": 1}
    assert crash.minimal_config == {"BLOCK_K": 16, "num_stages": 1, "num_warps": 2}
    assert (error.kind, error.outcome) == ("bug", "compiler-error")
    assert (crash.kind, crash.outcome) == ("bug", "crash")

    # No slipping: every config recorded under a signature really fails that way.
    for finding in (error, crash):
        for entry in finding.failing_configs:
            assert _planted_signature(entry.config) == finding.signature, entry

    # The boundaries, exactly: down one step leaves each bug (a local minimum),
    # up keeps it until the domain ends, except that more warps end the segfault.
    assert _walks(error) == {
        ("BLOCK_K", "down"): [(32, "passed")],
        ("BLOCK_K", "up"): [(128, "same")],
        ("num_stages", "down"): [(2, "passed")],
        ("num_stages", "up"): [(4, "same")],
        ("num_warps", "up"): [(2, "same"), (4, "same"), (8, "same")],
    }
    assert _walks(crash) == {
        ("BLOCK_K", "up"): [(32, "same"), (64, "same"), (128, "same")],
        ("num_stages", "up"): [(2, "same"), (3, "same"), (4, "same")],
        ("num_warps", "down"): [(1, "passed")],
        ("num_warps", "up"): [(4, "passed")],
    }
    assert {n.config["num_warps"] for n in crash.passing_neighbours} == {1, 4}

    # Each (config, target) ran once, and every run is counted.
    runs = [(json.dumps(e.config, sort_keys=True), e.target) for e in exploration.evaluations]
    assert len(runs) == len(set(runs))
    assert [e.number for e in exploration.evaluations] == list(range(1, len(runs) + 1))

    stored = DirectoryFindingsStore(tmp_path / "out" / "findings").all()
    assert sorted(f.signature for f in stored) == sorted(findings)
    assert all(f.seed == SEED and f.environment.triton for f in stored)
    assert not list((tmp_path / "out").glob(".explore-*")), "case folders are cleaned up"


def test_same_seed_same_search_and_a_rerun_replays_stored_failures_first(two_bugs, tmp_path):
    first = _explore(two_bugs, tmp_path / "a")
    second = _explore(two_bugs, tmp_path / "b")
    assert [(e.config, e.phase) for e in first.evaluations] == [
        (e.config, e.phase) for e in second.evaluations
    ]
    assert sorted(map(_comparable, first.findings), key=str) == sorted(
        map(_comparable, second.findings), key=str
    )

    again = _explore(two_bugs, tmp_path / "a")
    minimal = [f.minimal_config for f in first.findings]
    replayed = [e.config for e in again.evaluations if e.phase == "replay"]
    assert sorted(replayed, key=str) == sorted(minimal, key=str)
    assert again.evaluations[0].phase == "replay"
    assert _by_signature(again.findings).keys() == _by_signature(first.findings).keys()
    for before in first.findings:
        after = _by_signature(again.findings)[before.signature]
        assert after.minimal_config == before.minimal_config
        assert after.first_seen == before.first_seen
        assert after.last_seen >= before.last_seen
    database = tmp_path / "a" / "findings" / "hypothesis-db"
    assert any(path.is_file() for path in database.rglob("*"))


def _cli(argv: list[str]) -> int:
    """The two commands mounted on a parser built like ``repro``'s, with its error handling."""
    parser = Parser(prog="repro")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    explore_cli.add_parsers(commands)
    try:
        args: argparse.Namespace = parser.parse_args(argv)
        command = {"explore": explore_cli.cmd_explore, "findings": explore_cli.cmd_findings}
        return command[args.command](args)
    except UsageError as exc:
        print(f"repro: error: {exc}")
        return 2


def test_findings_json_lists_what_explore_found(two_bugs, tmp_path, capsys):
    output = str(tmp_path / "out")
    argv = ["explore", str(two_bugs), "-t", "sm_90", "--max-examples", str(EXAMPLES)]
    assert _cli([*argv, "--seed", str(SEED), "-o", output]) == 0
    shown = capsys.readouterr().out
    assert PLANTED_BUG in shown and SEGFAULT in shown
    assert "BLOCK_K=64, num_stages=3, num_warps=1" in shown

    assert _cli(["findings", "--json", "-o", output]) == 0
    records = json.loads(capsys.readouterr().out)["findings"]
    assert {r["signature"]: r["minimal_config"] for r in records} == {
        PLANTED_BUG: {"BLOCK_K": 64, "num_stages": 3, "num_warps": 1},
        SEGFAULT: {"BLOCK_K": 16, "num_stages": 1, "num_warps": 2},
    }
    assert all(r["repro"] == "planted-two-bugs" and r["boundary"] for r in records)

    assert _cli(["findings", "-o", output, "--kind", "limit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert _cli(["findings", "-o", output]) == 0
    assert "2 finding(s) under" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["explore", "no-such-repro"],
        ["explore", "tma-gemm-prefetch", "--target", "sm_999"],
        ["explore", "TWO_BUGS", "--target", "sm_100"],
        ["explore", "TWO_BUGS", "--max-examples", "0"],
        ["explore", "TWO_BUGS", "--max-examples", "5", "--time-budget", "5"],
        ["explore", "TWO_BUGS", "--profile", "nightly"],
    ],
)
def test_bad_input_is_a_usage_error(argv, two_bugs, tmp_path, capsys):
    argv = [str(two_bugs) if a == "TWO_BUGS" else a for a in argv]
    assert _cli([*argv, "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().out.startswith("repro: error: ")


@pytest.mark.venv
def test_tma_gemm_prefetch_under_350_shrinks_to_the_documented_trigger(tmp_path, triton_350):
    (found,) = select(["tma-gemm-prefetch"])
    exploration = explore(
        found,
        ["sm_100"],
        DirectoryFindingsStore(tmp_path / "findings"),
        Execution(python=str(triton_350), bounds=Bounds(timeout_s=300)),
        tmp_path,
        Budget(max_examples=10),
        seed=0,
    )
    (finding,) = [f for f in exploration.findings if "TritonGPUAssignLatencies" in f.signature]
    assert finding.kind == "bug"
    assert finding.minimal_config == {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "BLOCK_K": 32,
        "num_stages": 2,
        "num_warps": 4,
    }
    walks = _walks(finding)
    assert walks[("num_stages", "down")] == [(1, "passed")]
    assert walks[("num_warps", "up")] == [(8, "same"), (16, "passed")]


def test_a_stopped_explore_keeps_the_failures_met_so_far(two_bugs, tmp_path):
    """A stop (SIGINT, SIGTERM reach the search as KeyboardInterrupt) right after the first
    failing run: that failure is in the store, unshrunk, with no further run made."""
    (found,) = select([str(two_bugs)])
    seen: list[str] = []

    def stop_at_first_failure(evaluation) -> None:
        seen.append(evaluation.result.outcome.label)
        if evaluation.result.outcome.is_failure:
            raise KeyboardInterrupt

    store = DirectoryFindingsStore(tmp_path / "out" / "findings")
    with pytest.raises(KeyboardInterrupt):
        explore(
            found,
            ["sm_90"],
            store,
            Execution(bounds=Bounds(timeout_s=60)),
            tmp_path / "out",
            Budget(max_examples=EXAMPLES),
            SEED,
            on_evaluation=stop_at_first_failure,
        )
    (kept,) = store.all()
    assert kept.signature in {PLANTED_BUG, SEGFAULT}
    assert _planted_signature(kept.minimal_config) == kept.signature
    assert len(seen) == kept.evaluations["first_failure"]  # nothing ran after the stop
    assert not list((tmp_path / "out").glob(".explore-*"))  # the case folders were removed


def _child_cannot_start(folder: Path) -> Path:
    """An interpreter that runs everything but a case's child (or the warm template that
    forks one): those exit 1 before they read anything, as a child handed a spec path it
    cannot open did (issue 35)."""
    wrapper = folder / "python"
    roles = (Role.CASE, Role.WARM_TEMPLATE)
    starts = "|".join(f'*"{" ".join(child_argv("", role)[1:])}"*' for role in roles)
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$*" in {starts})\n'
        '  echo "wrapper: this child cannot start" >&2; exit 1;;\n'
        "esac\n"
        f'exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def test_a_child_that_cannot_start_ends_the_explore_as_a_harness_error(two_bugs, tmp_path):
    """Every evaluation failing at `start` was a finding (exit 0); it is the harness's own
    failure: exit 4 at the first one, one line naming the cause, nothing stored."""
    python = _child_cannot_start(tmp_path)
    output = tmp_path / "out"
    argv = ["explore", str(two_bugs), "--max-examples", str(EXAMPLES), "--seed", str(SEED)]
    done = repro_cli(*argv, "--python", str(python), "-o", str(output), "-q")
    assert done.code == 4, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("repro: harness error: evaluation 1 (planted-two-bugs[")
    assert "before it reported its start" in line
    assert "wrapper: this child cannot start" in line
    assert done.stdout == ""
    assert [p for p in output.rglob("*") if p.is_file()] == []


def test_a_glue_error_ends_the_explore_as_a_harness_error(tmp_path):
    """The reproducer's own glue raising for one config is no finding either: the explore
    ends there, storing nothing."""
    path = tmp_path / "glue.py"
    path.write_text(TWO_BUGS.replace('raise RuntimeError("planted bug")', "{}['missing']"))
    (found,) = select([str(path)])
    store = DirectoryFindingsStore(tmp_path / "out" / "findings")
    seen: list[str] = []
    with pytest.raises(HarnessError, match=r"KeyError: 'missing'.*nothing was stored"):
        explore(
            found,
            ["sm_90"],
            store,
            Execution(bounds=Bounds(timeout_s=60)),
            tmp_path / "out",
            Budget(max_examples=EXAMPLES),
            SEED,
            on_evaluation=lambda evaluation: seen.append(evaluation.result.outcome.label),
        )
    assert seen[-1] == "harness-error" and "harness-error" not in seen[:-1]
    assert store.all() == []


OLD_FINDING = (
    Path(__file__).parent / "data" / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
)


def test_a_finding_written_before_findings_kept_their_detail_still_names_its_site():
    from suite.failures.findings import read_finding
    from suite.subject import result_from_finding

    finding, record = read_finding(OLD_FINDING)
    assert "detail" not in record and finding.detail is None
    site = result_from_finding(finding).site
    assert (site.phase, site.stage, site.pass_name) == (
        "compile",
        "ttgir",
        "TritonGPUAssignLatencies",
    )


def test_a_finding_keeps_the_site_and_facts_of_its_minimal_case(tmp_path):
    from suite.engine import CaseResult, Environment, FailureFacts, FailureSite, Outcome, Signature
    from suite.failures.findings import SeenConfig
    from suite.subject import result_from_finding

    signature = "resource-limit:shared-memory"
    result = CaseResult(
        "r[sm_90]",
        "r",
        "sm_90",
        {"BLOCK": 128},
        Outcome.RESOURCE_LIMIT,
        Signature(signature),
        # A message that names no numbers: the record's facts are all the finding has.
        message="out of resource: shared memory",
        site=FailureSite(phase="compile", stage="ttgir"),
        facts=FailureFacts(resource="shared-memory", used=300_000, limit=232_448),
    )
    failing = [SeenConfig("sm_90", {"BLOCK": 128})]
    store = DirectoryFindingsStore(tmp_path / "findings")
    store.put(Finding.of(result, signature, Environment(), failing=failing))
    back = store.all()[0]
    assert back.detail == result.failure_detail()
    rebuilt = result_from_finding(back)
    assert (rebuilt.site, rebuilt.facts) == (result.site, result.facts)
