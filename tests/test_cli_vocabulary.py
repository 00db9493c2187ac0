"""One flag name and one meaning per concept on every command (docs/cli.md).

Every ``repro <command> --help`` (and each action's, ``repro baseline show --help``) is read as
a user reads it; each old spelling still parses as its new one and says so on stderr.
"""

from __future__ import annotations

import argparse
import re

import pytest

from suite.cli.main import DOORS, build_parser, main
from suite.cli.options import NOTED, OLD_SPELLING_NOTE
from suite.engine import Work

# Each concept's one spelling in --help: the option and how its value is shown.
CONCEPTS = {
    "--time-budget": "S",
    "--workers": "N",
    "--gpu": "{auto,on,off}",
    "--target": "TARGET",
    "--timeout": "S",
    "--memory-cap": "GIB",
}
# The spellings that the concepts had, which --help shows no more.
OLD = ("--budget-s", "--budget-tries", "--jobs", "--targets")
# An option line of --help: "  -j N, --workers N   cases run at once ...".
_OPTION = re.compile(r"^  (-\S.*?)(?:  +(.*))?$")


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Every command line's words down to a parser without actions of its own."""
    found = [words] if words else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*words, name))
    return found


COMMANDS = _commands(build_parser())


def _help(words: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main([*words, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def _options(text: str) -> dict[str, tuple[str, str]]:
    """Each long option of a --help text: (how its value is shown, the start of its help)."""
    found: dict[str, tuple[str, str]] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        matched = _OPTION.match(line)
        if not matched:
            continue
        said = matched.group(2) or (lines[number + 1].strip() if number + 1 < len(lines) else "")
        for spelling in matched.group(1).split(", "):
            name, _, value = spelling.partition(" ")
            if name.startswith("--"):
                found[name] = (value, said)
    return found


def test_the_walk_covers_every_command() -> None:
    assert {words[0] for words in COMMANDS} == set(DOORS)
    assert ("baseline", "show") in COMMANDS and ("nightly", "plan") in COMMANDS


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_every_help_says_each_concept_one_way(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(words, capsys)
    options = _options(text)
    for old in OLD:
        assert old not in options, f"repro {' '.join(words)} --help shows {old}"
    for option, value in CONCEPTS.items():
        if option in options:
            assert options[option][0] == value, (words, option, options[option])
    if "--workers" in options:
        assert "-j N, --workers N" in text
    if "--target" in options:
        assert "-t TARGET, --target TARGET" in text
    # What stdout shows is --format on every command; --json is its shorthand.
    assert options["--format"][0].startswith("{table,plain,json"), options["--format"]
    assert "--json" in options


def test_the_timeouts_are_one_default_per_kind_of_work(capsys: pytest.CaptureFixture[str]) -> None:
    shown = {}
    for words in COMMANDS:
        text = " ".join(_help(words, capsys).split())
        matched = re.search(r"--timeout S seconds per ([a-z ]+?) \(default: (\d+)\)", text)
        if matched:
            shown[words[0]] = (matched.group(1), float(matched.group(2)))
    assert shown["run"] == ("case", Work.CASE.value)
    assert shown["gate"] == ("compile", Work.COMPILE.value)
    assert shown["reduce"] == ("candidate", Work.CANDIDATE.value)
    assert {seconds for _, seconds in shown.values()} <= {work.value for work in Work}


# (a command line with the old spelling, the same with the new one, the old, the new)
RENAMED = [
    (
        "gate --kernel k --current c.yaml --budget-s 5",
        "gate --kernel k --current c.yaml --time-budget 5",
        "--budget-s",
        "--time-budget",
    ),
    (
        "gate --kernel k --current c.yaml --targets sm_90 --targets sm_100",
        "gate --kernel k --current c.yaml --target sm_90 --target sm_100",
        "--targets",
        "--target",
    ),
    (
        "gate --kernel k --current c.yaml --gpu --sizes 4096",
        "gate --kernel k --current c.yaml --gpu on --sizes 4096",
        "--gpu without a value",
        "--gpu on",
    ),
    ("replay x --budget-s 7", "replay x --time-budget 7", "--budget-s", "--time-budget"),
    ("replay x --budget-tries 3", "replay x --max-tries 3", "--budget-tries", "--max-tries"),
    ("reduce f --jobs 3", "reduce f --workers 3", "--jobs", "--workers"),
    ("report f --format md", "report f", "--format md", "the default format (no --format)"),
]


@pytest.mark.parametrize(("old_line", "new_line", "old", "new"), RENAMED, ids=lambda v: v)
def test_an_old_spelling_still_works_and_notes_itself(
    old_line: str, new_line: str, old: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    NOTED.clear()  # each old spelling notes itself once per process
    parser = build_parser()
    with_old = parser.parse_args(old_line.split())
    assert capsys.readouterr().err == OLD_SPELLING_NOTE.format(old=old, new=new) + "\n"
    assert vars(with_old) == vars(parser.parse_args(new_line.split()))
    assert capsys.readouterr().err == ""


def test_an_old_spelling_reaches_the_command(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old spelling is checked as the new one is: ``--jobs 0`` is refused as ``--workers``."""
    NOTED.clear()
    status = main(["reduce", "no-such-finding", "--jobs", "0", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.splitlines() == [
        OLD_SPELLING_NOTE.format(old="--jobs", new="--workers"),
        "repro: error: --workers 0: must be positive",
    ]
