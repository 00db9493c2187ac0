"""The nightly loop on real runs: `repro run`, `repro merge`, `repro nightly plan/advance`.

The planted reproducer really aborts in its child process, with the message a file beside
it names for each target, so that a series of nights (a bug appears, spreads, changes its
message, is fixed, comes back) costs a few seconds each. The release series on cached venvs
(`venv`) is the same loop on real Triton bugs: docs/releases.md shows its plan.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import repro_cli, triton_release

PLANTED = """
import json
import os
import sys
from pathlib import Path

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="nightly-planted",
    title="A compile that aborts as night.json beside it says",
    family="test",
    params=(Choice("n", (0, 1, 2)),),
    configs={"all": [{"n": 0}, {"n": 1}, {"n": 2}]},
    targets=("sm_90", "sm_100"),
    label="n{n}",
)


@REPRO.compile
def compile_case(case):
    night = json.loads(Path(__file__).with_name("night.json").read_text())
    message = night.get(case.target.name)
    if message and case["n"] >= 1:
        sys.stderr.write(f"LLVM ERROR: {message}\\n")
        sys.stderr.flush()
        os.abort()
    return Compiled(shared_bytes=1024)
"""

# No first_bad: a fix on the installed release must come after it (a malformed baseline
# else), and under 3.0.0, the oldest supported release, no release comes before.
FIX_KNOWN = """
[[known]]
id = "planted-abort"
repro = "nightly-planted"
signature = "crash:SIGABRT:compile: LLVM ERROR: Cannot select*"
kind = "compiler-bug"
fixed_in = "{fixed_in}"
"""


class Nights:
    """One folder: the reproducer, its night.json, the output root, the state."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.repro = folder / "nightly_planted.py"
        self.repro.write_text(textwrap.dedent(PLANTED))
        self.state = folder / "state"
        self.count = 0

    def run(self, night: dict[str, str], *extra: str, output: str = "out") -> Path:
        (self.folder / "night.json").write_text(json.dumps(night))
        done = repro_cli("run", str(self.repro), "--json", "-o", str(self.folder / output), *extra)
        assert done.code in (0, 1), done.stdout + done.stderr
        return Path(json.loads(done.stdout)["run"])

    def plan(self, run: Path, baseline: Path | None = None) -> dict:
        self.count += 1
        plan = self.folder / f"plan-{self.count}.json"
        options = ["--baseline", str(baseline)] if baseline else []
        done = repro_cli(
            "nightly", "plan", str(run), "--state", str(self.state), "--plan", str(plan), *options
        )
        assert done.code == 0, done.stdout + done.stderr
        again = repro_cli("nightly", "plan", str(run), "--state", str(self.state), *options)
        assert again.stdout == plan.read_text()  # same input, same plan, byte for byte
        advanced = repro_cli("nightly", "advance", str(plan), "--state", str(self.state))
        assert advanced.code == 0, advanced.stderr
        return json.loads(plan.read_text())


def changes(plan: dict) -> list[tuple[str, str]]:
    return [
        (a["action"], ", ".join(a["reasons"])) for a in plan["actions"] if a["action"] != "none"
    ]


# The fix lands on whatever release runs the tests, so the nights hold on every release.
INSTALLED = triton_release()
A = "Cannot select: intrinsic llvm.nvvm.foo"
B = "Cannot select: intrinsic llvm.nvvm.foo.v2"
OTHER = "Assertion 'isa<MemDescType>(type)' failed"


@pytest.mark.slow
def test_a_series_of_nights_speaks_only_on_change(tmp_path):
    nights = Nights(tmp_path)
    empty = tmp_path / "empty.toml"
    empty.write_text("known = []\n")
    knows_fix = tmp_path / "fixed.toml"
    knows_fix.write_text(FIX_KNOWN.format(fixed_in=INSTALLED))

    first = nights.plan(nights.run({}), empty)
    assert first["actions"] == [] and not first["changed"]

    opened = nights.plan(nights.run({"sm_90": A}), empty)
    assert changes(opened) == [("open", "new: fails on sm_90")]
    (action,) = opened["actions"]
    assert action["title"] == f"crash:SIGABRT:compile: LLVM ERROR: {A} (nightly-planted)"
    assert action["case"] == "nightly-planted[sm_90-n1]"
    finding = action["finding"]

    same = nights.plan(nights.run({"sm_90": A}), empty)
    assert changes(same) == [] and not same["changed"]
    assert [a["action"] for a in same["actions"]] == ["none"]

    spread = nights.plan(nights.run({"sm_90": A, "sm_100": A}), empty)
    assert changes(spread) == [("comment", "spread to sm_100")]

    changed = nights.plan(nights.run({"sm_90": B, "sm_100": B}), empty)
    assert changes(changed) == [
        (
            "comment",
            f"message changed: crash:SIGABRT:compile: LLVM ERROR: {A} -> "
            f"crash:SIGABRT:compile: LLVM ERROR: {B}",
        )
    ]
    assert changed["actions"][0]["finding"] == finding  # one finding, its message changed

    fixed = nights.plan(nights.run({}), empty)
    assert [a for a, _ in changes(fixed)] == ["comment"]
    assert "the baseline does not know the fix yet" in changes(fixed)[0][1]

    closed = nights.plan(nights.run({}), knows_fix)
    assert changes(closed) == [("close", f"the baseline now knows the fix (fixed on {INSTALLED})")]
    quiet = nights.plan(nights.run({}), knows_fix)
    assert changes(quiet) == []

    back = nights.plan(nights.run({"sm_90": B}), knows_fix)
    assert [a for a, _ in changes(back)] == ["reopen"]
    assert back["actions"][0]["finding"] == finding
    state = json.loads((nights.state / "state.json").read_text())
    assert state["findings"][finding]["status"] == "failing"
    assert state["findings"][finding]["issue"] == "open"


def test_a_fix_the_baseline_knows_closes_on_the_night_it_comes(tmp_path):
    nights = Nights(tmp_path)
    knows_fix = tmp_path / "fixed.toml"
    knows_fix.write_text(FIX_KNOWN.format(fixed_in=INSTALLED))
    opened = nights.plan(nights.run({"sm_90": A}, "-t", "sm_90"))
    assert [a for a, _ in changes(opened)] == ["open"]
    closed = nights.plan(nights.run({}, "-t", "sm_90"), knows_fix)
    assert changes(closed) == [("close", f"fixed in {INSTALLED}; the baseline knows the fix")]


KNOWN_UPSTREAM = """
[[known]]
id = "planted-abort"
repro = "nightly-planted"
signature = "crash:SIGABRT:compile: LLVM ERROR: Cannot select*"
kind = "compiler-bug"
where = {n = [1, 2]}
upstream = "https://github.com/triton-lang/triton/issues/1234 (open)"
"""


def test_a_known_bug_with_an_upstream_issue_gets_none_opened(tmp_path):
    """issue 35: the first nightly plan opened an issue for every known bug, those whose
    baseline entry links their upstream issue too."""
    nights = Nights(tmp_path)
    known = tmp_path / "known.toml"
    known.write_text(KNOWN_UPSTREAM)
    first = nights.plan(nights.run({"sm_90": A}, "-t", "sm_90", "--baseline", str(known)), known)
    assert changes(first) == [] and not first["changed"]
    (action,) = first["actions"]
    assert action["reasons"] == [
        "known upstream: https://github.com/triton-lang/triton/issues/1234"
    ]
    state = json.loads((nights.state / "state.json").read_text())
    assert state["findings"][action["finding"]]["issue"] == "upstream"
    spread = nights.plan(nights.run({"sm_90": A, "sm_100": A}, "--baseline", str(known)), known)
    assert changes(spread) == [("comment", "spread to sm_100")]  # no issue: said, not posted
    state = json.loads((nights.state / "state.json").read_text())
    assert state["findings"][action["finding"]]["issue"] == "upstream"


def test_cases_that_did_not_run_change_nothing(tmp_path):
    nights = Nights(tmp_path)
    nights.plan(nights.run({"sm_90": A}, "-t", "sm_90"))
    other_target = nights.plan(nights.run({}, "-t", "sm_100"))
    assert changes(other_target) == []


def test_three_shards_merged_give_the_unsharded_results_and_plan(tmp_path):
    nights = Nights(tmp_path)
    night = {"sm_90": A, "sm_100": OTHER}  # two bugs
    whole = nights.run(night, output="whole")
    shards = [nights.run(night, "--shard", f"{k}/3", output=f"shard{k}") for k in (1, 2, 3)]
    merged = repro_cli("merge", *map(str, shards), "-o", str(tmp_path / "merged"), "--json")
    assert merged.code == 1, merged.stdout + merged.stderr  # the run's own status: regressions
    merged_run = Path(json.loads(merged.stdout)["run"])

    def cases(run: Path) -> list[tuple]:
        lines = (run / "results.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        keys = ("case_id", "outcome", "signature", "verdict", "expectation", "triage", "config")
        return sorted(tuple(json.dumps(r[k]) for k in keys) for r in records)

    assert len(cases(merged_run)) == 6
    assert cases(merged_run) == cases(whole)
    summary = json.loads((merged_run / "summary.json").read_text())
    assert summary["exit_status"] == json.loads((whole / "summary.json").read_text())["exit_status"]
    for result in map(json.loads, (merged_run / "results.jsonl").read_text().splitlines()):
        for path in result["artifacts"].values():
            assert path.startswith(str(merged_run)) and Path(path).exists()

    plans = []
    for run in (whole, merged_run):
        done = repro_cli("nightly", "plan", str(run), "--state", str(tmp_path / "nostate"))
        assert done.code == 0, done.stderr
        plans.append(done.stdout)
    assert plans[0] == plans[1]
    assert [a["action"] for a in json.loads(plans[0])["actions"]] == ["open", "open"]


def test_merge_refuses_shards_of_different_runs(tmp_path):
    nights = Nights(tmp_path)
    one = nights.run({}, "--shard", "1/2", "-t", "sm_90", output="a")
    other = nights.run({}, "--shard", "2/2", output="b")
    done = repro_cli("merge", str(one), str(other), "-o", str(tmp_path / "m"))
    assert done.code == 2
    assert "ran another selection" in done.stderr and len(done.stderr.splitlines()) == 1
    twice = repro_cli("merge", str(one), str(one), "-o", str(tmp_path / "m"))
    assert twice.code == 2 and "named twice" in twice.stderr
    assert not (tmp_path / "m").exists()


def test_a_malformed_state_or_plan_is_one_line_exit_2(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "state.json").write_text('{"schema": 1, "findings": []}')
    nights = Nights(tmp_path)
    run = nights.run({}, "-t", "sm_90")
    done = repro_cli("nightly", "plan", str(run), "--state", str(state))
    assert done.code == 2 and "malformed nightly state" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    (tmp_path / "plan.json").write_text("{")
    bad = repro_cli("nightly", "advance", str(tmp_path / "plan.json"), "--state", str(state))
    assert bad.code == 2 and "unreadable plan" in bad.stderr
    not_run = repro_cli("nightly", "plan", str(tmp_path), "--state", str(tmp_path / "fresh"))
    assert not_run.code == 2 and "not a finished run folder" in not_run.stderr


SERIES = ("3.3.1", "3.4.0", "3.5.0", "3.5.1", "3.6.0", "3.7.1", "3.5.1")
PREFETCH, WS = "tma-gemm-prefetch", "upstream-9728-ws-pointer-dot-hopper"


@pytest.mark.slow
@pytest.mark.venv
def test_a_series_of_releases_as_nightly_builds(tmp_path):
    """Cached release venvs stand in for nightly builds (the last night: 3.5.1 again, a nightly
    that brought the AssignLatencies bug back). Two bugs, 7 cases a night: AssignLatencies
    (3.4.0-3.5.1, fixed_in 3.6.0 in the baseline) and #9728 (3.4.0 on, its message changes
    in 3.7)."""
    from suite.toolchain.venvs import for_version

    state, plans = tmp_path / "state", []
    for number, release in enumerate(SERIES):
        python = for_version(release).python
        done = repro_cli(
            "run", "tma-gemm-prefetch", "upstream-9728-ws-pointer-dot-hopper", "-c", "trigger",
            "-t", "sm_90", "-t", "sm_100", "--python", python, "--json", "-o", str(tmp_path),
        )  # fmt: skip
        assert done.code in (0, 1), done.stderr
        run = json.loads(done.stdout)["run"]
        plan = tmp_path / f"plan-{number}.json"
        planned = repro_cli("nightly", "plan", run, "--state", str(state), "--plan", str(plan))
        assert planned.code == 0, planned.stderr
        assert repro_cli("nightly", "advance", str(plan), "--state", str(state)).code == 0
        plans.append(json.loads(plan.read_text()))

    said = [
        [(a["action"], a["repro"], ", ".join(a["reasons"])) for a in p["actions"]] for p in plans
    ]
    assert [[(a, f) for a, f, _ in night if a != "none"] for night in said] == [
        [],
        [("open", PREFETCH)],  # #9728's entry links its upstream issue: none is opened
        [],
        [],
        [("close", PREFETCH)],
        [("comment", WS)],
        [("reopen", PREFETCH), ("comment", WS)],
    ]
    assert said[1][1] == (
        "none",
        WS,
        "known upstream: https://github.com/triton-lang/triton/issues/9728",
    )
    assert said[4][0][2] == "fixed in 3.6.0; the baseline knows the fix"
    before, after = said[5][1][2].removeprefix("message changed: ").split(" -> ")
    assert (
        before.startswith("compiler-error:ttgir:NVGPUWarpSpecialization") and "Assertion" in before
    )
    assert after.endswith("unsupported load type for producer commit")
    assert said[6][0][2] == "fails again (fixed on 3.6.0)"
    findings = {a["repro"]: a["finding"] for p in plans for a in p["actions"]}
    assert [a["finding"] for a in plans[-1]["actions"]] == [findings[PREFETCH], findings[WS]]
    assert [p["changed"] for p in plans] == [False, True, False, False, True, True, True]
