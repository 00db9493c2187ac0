"""What people and scripts read: every command's log output (80 columns, no terminal) holds
the full case id and its signature on one line, the terminal table never breaks an id, and
every ``--json`` matches its schema in ``docs/schemas.md``.

All of it through the real ``repro`` command line, on real reproducer files and real runs.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from conftest import ROOT, repro_cli

from suite.cli.main import build_parser

NARROW = {"COLUMNS": "80"}

PLANTED = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="output-planted-pipeliner-with-a-long-name",
    title="A planted compile failure whose ids and signatures are longer than a log line allows",
    family="test",
    params=(Choice("BLOCK_SIZE_K", (64, 128)), Choice("num_stages", (3, 4))),
    configs={"all": [{"BLOCK_SIZE_K": 128, "num_stages": 4},
                     {"BLOCK_SIZE_K": 64, "num_stages": 3}]},
    targets=("sm_90", "sm_100"),
)


@REPRO.compile
def compile_case(case):
    if case["BLOCK_SIZE_K"] == 128:
        raise RuntimeError(
            "planted pipeliner failure with a message long enough to be wrapped at eighty columns"
        )
    return Compiled(shared_bytes=1024)
"""


def schemas() -> dict[str, dict]:
    """The schema blocks of docs/schemas.md, by command."""
    text = (ROOT / "docs" / "schemas.md").read_text()
    blocks = re.findall(r"<!-- schema: ([\w-]+) -->\n```json\n(.*?)\n```", text, re.DOTALL)
    return {name: json.loads(body) for name, body in blocks}


def check_json(command: str, stdout: str) -> dict:
    document = json.loads(stdout)
    jsonschema.validate(document, schemas()[command])
    return document


def line_with(text: str, *parts: str) -> str:
    """The one line of ``text`` holding every part (ids and signatures are never split)."""
    found = [line for line in text.splitlines() if all(p in line for p in parts)]
    assert found, f"no line holds {parts!r} in:\n{text}"
    return found[0]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repro") / "planted_output.py"
    path.write_text(textwrap.dedent(PLANTED))
    return path


@pytest.fixture(scope="module")
def ran(planted: Path, tmp_path_factory: pytest.TempPathFactory):
    """One plain run at 80 columns, and its results."""
    output = tmp_path_factory.mktemp("out")
    done = repro_cli("run", str(planted), "-o", str(output), "-j", "2", env=NARROW)
    assert done.code == 1, done.stdout + done.stderr  # planted failures: regressions
    (folder,) = (output / "runs").iterdir()
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    return done, results, output, folder


def test_every_command_has_json_and_the_listings_have_format():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    for name, sub in commands.choices.items():
        options = {o for action in sub._actions for o in action.option_strings}
        assert {"--json", "--quiet", "--verbose"} <= options, name
    for name in ("run", "list", "findings", "matrix", "bisect", "gate"):
        sub = commands.choices[name]
        (fmt,) = [a for a in sub._actions if "--format" in a.option_strings]
        assert tuple(fmt.choices) == ("table", "plain", "json"), name


def test_run_log_has_each_case_on_one_greppable_line(ran):
    done, results, _, _ = ran
    failing = [r for r in results if r["signature"]]
    assert len(failing) == 2 and len(results) == 4
    for record in results:
        line = line_with(done.stdout, record["case_id"])
        cells = line.split("\t")
        assert cells[0] == record["case_id"]
        assert cells[1:3] == [record["outcome"], "regression" if record["signature"] else "ok"]
        if record["signature"]:
            assert cells[3] == "compiler-bug"  # the triage
            assert cells[4] == record["signature"]
    # progress in the log: one line per case on stderr, with the elapsed time
    for record in results:
        assert re.search(
            r"^\[\s*\d+\.\d+s\] cases \d/4: " + re.escape(record["case_id"]),
            done.stderr,
            re.MULTILINE,
        )


def test_run_json_matches_its_schema_and_hands_over_subjects(planted, tmp_path):
    done = repro_cli("run", str(planted), "-o", str(tmp_path), "--json", "-q", env=NARROW)
    assert done.code == 1
    assert done.stderr == ""  # --quiet: no progress
    document = check_json("run", done.stdout)
    assert Path(document["results"]).is_file()
    failing = [c for c in document["cases"] if c["signature"]]
    assert {c["triage"] for c in failing} == {"compiler-bug"}
    for case in failing:
        folder, case_id = case["subject"].rsplit(":", 1)
        assert Path(folder) == Path(document["run"]) and case_id == case["case_id"]


def test_the_terminal_table_never_breaks_an_id(planted, ran):
    _, results, output, _ = ran
    narrow = repro_cli(
        "run", str(planted), "-o", str(output), "--format", "table", "-q", env=NARROW
    )
    wide = repro_cli(
        "run", str(planted), "-o", str(output), "--format", "table", "-q", env={"COLUMNS": "220"}
    )
    for done in (narrow, wide):
        for record in results:
            assert record["case_id"] in done.stdout, done.stdout
    # 220 columns fit a table: the signature starts on the case's row and folds in its column
    for record in results:
        if record["signature"]:
            line_with(wide.stdout, record["case_id"], record["signature"][:60])


def test_list_plain_and_json(planted):
    done = repro_cli("list", str(planted), env=NARROW)
    assert done.code == 0
    line = line_with(done.stdout, "output-planted-pipeliner-with-a-long-name")
    assert line.split("\t")[:3] == [
        "output-planted-pipeliner-with-a-long-name",
        "test",
        "sm_90 sm_100",
    ]
    document = check_json("list", repro_cli("list", "--json", str(planted)).stdout)
    assert document["reproducers"][0]["file"] == str(planted.resolve())


def test_explore_and_findings_logs_and_json(planted, tmp_path):
    output = str(tmp_path)
    done = repro_cli(
        "explore",
        str(planted),
        "-t",
        "sm_90",
        "--max-examples",
        "6",
        "--seed",
        "1",
        "-o",
        output,
        env=NARROW,
    )
    assert done.code == 0, done.stderr
    explored = check_json(
        "explore",
        repro_cli(
            "explore",
            str(planted),
            "-t",
            "sm_90",
            "--max-examples",
            "6",
            "--seed",
            "1",
            "-o",
            output,
            "--json",
            "-q",
        ).stdout,
    )
    (finding,) = explored["findings"]
    assert Path(finding["file"]).stem == finding["id"]
    # the log: each evaluation's case id with its signature, one line each
    case = "output-planted-pipeliner-with-a-long-name[sm_90-"
    line_with(done.stderr, case, finding["signature"])
    line_with(done.stdout, finding["id"], finding["signature"])

    listed = repro_cli("findings", "-o", output, env=NARROW)
    assert line_with(listed.stdout, finding["id"]).split("\t")[2] == finding["signature"]
    document = check_json("findings", repro_cli("findings", "-o", output, "--json").stdout)
    assert [f["id"] for f in document["findings"]] == [finding["id"]]


def test_matrix_log_and_json(planted, tmp_path):
    args = ("matrix", str(planted), "-t", "sm_90", "--python", sys.executable, "-o", str(tmp_path))
    done = repro_cli(*args, env=NARROW)
    # the planted failures are regressions: exit 1 where matrix exits as run does, else 0
    assert done.code in (0, 1), done.stderr
    document = check_json("matrix", repro_cli(*args, "--json", "-q").stdout)
    for row in document["rows"]:
        (cell,) = row["cells"].values()
        assert line_with(done.stdout, row["case"]).split("\t") == [row["case"], cell]
    assert any(
        cell.startswith("compiler-error") for r in document["rows"] for cell in r["cells"].values()
    )
    assert re.search(r"^\[\s*\d+\.\d+s\] matrix 1/1: ", done.stderr, re.MULTILINE)


def test_report_log_and_json(ran, tmp_path):
    _, results, _, folder = ran
    record = next(r for r in results if r["signature"])
    subject = f"{folder}:{record['case_id']}"
    done = repro_cli("report", subject, "-o", str(tmp_path), "--id", "text", env=NARROW)
    assert done.code == 0, done.stderr
    line_with(done.stdout, record["case_id"], record["signature"])
    document = check_json(
        "report", repro_cli("report", subject, "-o", str(tmp_path), "--id", "json", "--json").stdout
    )
    assert document["case_id"] == record["case_id"] and Path(document["folder"]).is_dir()


def test_dashboard_json(ran):
    _, _, output, _ = ran
    document = check_json("dashboard", repro_cli("dashboard", "-o", str(output), "--json").stdout)
    assert Path(document["page"]).is_file()


def test_capture_json_is_the_capture_document_and_the_program_prints_on_stderr(tmp_path):
    program = "import sys; print('to stdout'); print('to stderr', file=sys.stderr); sys.exit(3)"
    done = repro_cli("capture", "-o", str(tmp_path), "--json", "--", sys.executable, "-c", program)
    assert done.code == 3  # the program's own exit status
    document = check_json("capture", done.stdout)
    assert document == json.loads(Path(document["folder"], "capture.json").read_text())
    assert "to stdout" in done.stderr and "to stderr" in done.stderr
    assert document["program"]["timeout_s"] is None and document["failures"] == []


def subcommands() -> dict[str, object]:
    """Every command's parser by schema name: ``baseline-show`` for an action's."""
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    found: dict[str, object] = {}
    for name, sub in commands.choices.items():
        actions = [a for a in sub._actions if a.dest.endswith("_action")]
        if actions:
            for action, parser_of in actions[0].choices.items():
                found[f"{name}-{action}"] = parser_of
        else:
            found[name] = sub
    return found


def test_every_command_and_action_has_a_schema_block():
    missing = sorted(set(subcommands()) - set(schemas()))
    assert not missing, f"no schema block in docs/schemas.md for {missing}"
    for name, sub in subcommands().items():
        options = {o for action in sub._actions for o in action.option_strings}
        assert "--json" in options, name


def test_baseline_json_matches_its_schemas(tmp_path):
    path = tmp_path / "baseline.toml"
    path.write_text((ROOT / "repros" / "baseline.toml").read_text())
    finding = ROOT / "tests" / "data" / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
    accepted = repro_cli("baseline", "accept", str(finding), "--baseline", str(path), "--json")
    assert accepted.code == 0, accepted.stderr
    document = check_json("baseline-accept", accepted.stdout)
    assert document["action"] == "updated"
    assert document["entry"]["id"] == "assign-latencies-prefetch"

    shown = check_json(
        "baseline-show", repro_cli("baseline", "show", "--baseline", str(path), "--json").stdout
    )
    assert "assign-latencies-prefetch" in {e["id"] for e in shown["entries"]}
    checked = repro_cli("baseline", "--json", "check", "--baseline", str(path))
    assert checked.code == 0, checked.stderr
    assert check_json("baseline-check", checked.stdout)["problems"] == []

    broken = tmp_path / "broken.toml"
    broken.write_text(
        "[[known]]\nid = 'x'\nrepro = 'no-such-reproducer'\nsignature = 's'\n"
        "kind = 'compiler-bug'\n"
    )
    refused = repro_cli("baseline", "check", "--baseline", str(broken), "--json")
    assert refused.code == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert check_json("baseline-check", refused.stdout)["problems"]


def test_merge_and_nightly_json_match_their_schemas(planted, tmp_path):
    shards = []
    for k in (1, 2):
        done = repro_cli(
            "run", str(planted), "--shard", f"{k}/2", "-o", str(tmp_path / f"s{k}"), "-q", "-j", "1"
        )
        assert done.code in (0, 1), done.stderr
        (run,) = (tmp_path / f"s{k}" / "runs").iterdir()
        shards.append(str(run))
    merged = repro_cli("merge", *shards, "-o", str(tmp_path / "merged"), "--json")
    assert merged.code == 1, merged.stderr  # the planted failures are regressions
    document = check_json("merge", merged.stdout)
    run = document["run"]
    assert Path(document["results"]).is_file()

    state, plan = str(tmp_path / "state"), str(tmp_path / "plan.json")
    printed = repro_cli("nightly", "plan", run, "--state", state)
    assert printed.code == 0, printed.stderr
    check_json("nightly-plan", printed.stdout)  # no --plan: the plan itself, in any format
    written = repro_cli("nightly", "plan", run, "--state", state, "--plan", plan, "--json")
    planned = check_json("nightly-plan", written.stdout)
    assert planned["plan"] == plan and planned["counts"]["open"] == 1
    (action,) = planned["actions"]
    assert action["case"] in {c for t in planned["state"]["findings"].values() for c in t["cases"]}

    advanced = check_json(
        "nightly-advance", repro_cli("nightly", "advance", plan, "--state", state, "--json").stdout
    )
    assert Path(advanced["state"]).is_file() and advanced["findings"] == 1
    shown = check_json(
        "nightly-show", repro_cli("nightly", "show", "--state", state, "--json").stdout
    )
    assert [t["finding"] for t in shown["findings"]] == [action["finding"]]


LAUNCHES = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="output-planted-launches",
    title="A kernel that launches: without a GPU of its target, it is only compiled",
    family="test",
    params=(Choice("BLOCK", (64, 128)),),
    configs={"all": [{"BLOCK": 64}, {"BLOCK": 128}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    if case["BLOCK"] == 128:
        raise RuntimeError("planted pipeliner failure")
    return Compiled(shared_bytes=1024)


@REPRO.launch
def launch_case(case):
    raise AssertionError("no GPU here: never launched")
"""


def test_one_outcome_vocabulary_in_every_rendering(tmp_path):
    """issue 35: a launching case that was only compiled was `passed` in the progress line
    and summary.json but `compiled` in the table, and the closing line's parenthesis
    counted every case after the last verdict."""
    from suite.engine.outcome import Outcome

    planted = tmp_path / "planted_launches.py"
    planted.write_text(textwrap.dedent(LAUNCHES))
    output = tmp_path / "out"
    done = repro_cli("run", str(planted), "-o", str(output), "-j", "1", "--gpu", "off")
    assert done.code == 1, done.stderr
    compiled, failing = (
        "output-planted-launches[sm_90-64]",
        "output-planted-launches[sm_90-128]",
    )
    assert re.search(rf"cases \d/2: {re.escape(compiled)} compiled ok$", done.stderr, re.M)
    assert line_with(done.stdout, compiled).split("\t")[1] == "compiled"
    (folder,) = (output / "runs").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["outcomes"] == {"compiled": 1, "compiler-error": 1}
    junit = ET.parse(folder / "junit.xml").getroot()
    shown = {
        case.get("name"): case.find("properties/property[@name='outcome']").get("value")
        for case in junit.iter("testcase")
    }
    assert shown == {compiled: "compiled", failing: "compiler-error"}
    assert "2 cases: 1 ok (1 compiled), 1 regression (1 compiler-error); exit 1" in done.stdout
    # The record keeps what the engine made of it; the schema lists every shown word.
    records = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert {r["case_id"]: r["outcome"] for r in records}[compiled] == "passed"
    case_schema = schemas()["run"]["properties"]["cases"]["items"]["properties"]
    assert case_schema["outcome"]["enum"] == [o.label for o in Outcome]


def test_help_lists_every_exit_status_from_its_one_home():
    """issue 35: ``repro --help`` listed 0, 1, 2, 3 and 70, not 4 (a harness error)."""
    from suite.errors import EXIT_HARNESS, EXIT_STATUSES

    done = repro_cli("--help")
    assert done.code == 0
    shown = {
        line.split()[0].rstrip(",")
        for line in done.stdout.split("Exit status", 1)[1].splitlines()[1:]
        if line.startswith("  ") and line.split()[0].rstrip(",").isdigit()
    }
    assert shown == {status.split(",")[0] for status, _ in EXIT_STATUSES}
    assert str(EXIT_HARNESS) in shown
