"""The package layout: no import cycles between the packages of ``suite/``, one home per
concern, modules of a readable size."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import suite

SUITE = Path(suite.__file__).resolve().parent
PACKAGES = {p.name for p in SUITE.iterdir() if (p / "__init__.py").exists()}


def _unit(parts: tuple[str, ...]) -> str:
    """A package of ``suite/`` (``engine``, ``cuda``: a package counts whole, with every
    package inside it) or a top-level module (``suite.api``)."""
    if len(parts) >= 2 and parts[1] in PACKAGES:
        return parts[1]
    return ".".join(parts[:2])


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in SUITE.rglob("*.py"):
        here = _unit(("suite", *path.relative_to(SUITE).with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = tuple(name.split("."))
                if parts[0] == "suite" and len(parts) > 1 and _unit(parts) != here:
                    graph[here].add(_unit(parts))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a path, or [] (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_no_import_cycles_between_packages():
    graph = import_graph()
    assert {"engine", "cli", "report"} <= set(graph), sorted(graph)
    assert find_cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


# The packages of the commands (each command's door in suite/cli drives one or more).
COMMANDS = {"cli", "report", "gate", "replay", "releases", "search", "reduce", "capture", "explain"}


def test_the_engine_imports_no_command_package():
    below = COMMANDS | {"failures", "tma_differential"}  # the harness is over the model
    assert import_graph()["engine"] & below == set()


def test_the_failures_package_is_below_every_command_package():
    """A finding is read and written by every command about a failure: its record and store
    import the engine and no command package."""
    graph = import_graph()
    assert "engine" in graph["failures"]
    assert graph["failures"] & COMMANDS == set()


def _top_level_names() -> dict[str, list[str]]:
    """Each class and function name defined at the top of a module of ``suite/``, with the
    modules that define it."""
    names: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SUITE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names[node.name].append(str(path.relative_to(SUITE)))
    return names


def test_finding_and_run_lookup_have_one_home():
    """report, replay, bisect and reduce name their subject one way: suite.subject."""
    names = _top_level_names()
    for name in ("Subject", "subject_of", "locate", "load_finding", "result_from_finding"):
        assert names[name] == ["subject.py"], (name, names[name])
    commands = ("report/", "replay/", "search/", "failures/")
    lookups = [m for m in names["resolve"] if m.startswith(commands)]
    assert lookups == [], lookups


def test_a_name_means_one_thing():
    """One class named Verdict (a case against the baseline), and no other name defined at the
    top of two modules for two different things."""
    names = _top_level_names()
    assert names["Verdict"] == ["engine/outcome.py"]
    for name in ("Expectation", "Compiled", "Captured", "family_of", "judge"):
        assert len(names[name]) <= 1, (name, names[name])


def test_a_finding_is_made_in_one_place():
    """``Finding.of`` (suite/failures/findings.py) makes every finding: explore's and
    capture's alike, never built field by field elsewhere."""
    makers = {
        str(path.relative_to(SUITE))
        for path in SUITE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.func.id == "Finding"
    }
    assert makers == set()


def _verdict_words(path: Path) -> list[str]:
    """Each string a ``.verdict`` is compared with in the file at ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(n, ast.Attribute) and n.attr == "verdict" for n in sides):
            continue
        for side in sides:
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            found += [n.value for n in items if isinstance(n, ast.Constant)]
    return found


def test_verdicts_are_compared_as_members_of_their_enum():
    """A case's verdict is a ``suite.engine.Verdict`` everywhere, never its word."""
    from suite.engine import Verdict

    words = {v.value for v in Verdict}
    found = {str(path.relative_to(SUITE)): _verdict_words(path) for path in SUITE.rglob("*.py")}
    assert {name: seen for name, seen in found.items() if words & set(seen)} == {}


def _classes_setting(attribute: str) -> list[tuple[str, str]]:
    """``(module, class)`` for each class of ``suite/`` whose body sets ``attribute``."""
    found = []
    for path in sorted(SUITE.rglob("*.py")):
        module = ".".join(("suite", *path.relative_to(SUITE).with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                target = item.target if isinstance(item, ast.AnnAssign) else None
                targets = item.targets if isinstance(item, ast.Assign) else [target]
                if any(isinstance(t, ast.Name) and t.id == attribute for t in targets):
                    found.append((module, node.name))
    return found


def test_every_parent_child_message_derives_from_the_one_base():
    """Every JSON-lines dialect between a parent and its child is a direct subclass of
    ``suite.engine.Message``: one discriminator, one registry, one reader; no dialect keeps
    a registry, a writer or a reader of its own."""
    import importlib

    from suite.engine.wire import KIND_KEY, REGISTRY, Message

    kinds = _classes_setting("KIND")
    assert len(kinds) >= 30, kinds
    dialects = set()
    for module, name in kinds:
        kind = getattr(importlib.import_module(module), name)
        assert issubclass(kind, Message), (module, name)
        if kind is Message:
            continue
        dialects.add(kind.dialect())
        if kind.KIND:
            assert REGISTRY[kind.dialect()][kind.KIND] is kind, (module, name)
            # No field hides the discriminator or a method of the base (record, line, ...).
            names = {f.name for f in dataclasses.fields(kind)}
            assert not names & {KIND_KEY, *dir(Message)}, (module, name)
    assert {d.__name__ for d in dialects} == {
        "Event",
        "TemplateMessage",
        "GateEvent",
        "ReplayMessage",
    }
    own = ("to_line", "read_message", "EVENT_TYPES", "MESSAGE_TYPES")
    names = _top_level_names()
    assert {n: names[n] for n in own if names.get(n)} == {}
    writers = [
        str(path.relative_to(SUITE))
        for path in SUITE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name == "to_line"
    ]
    assert writers == []


def _gate_words(path: Path) -> list[str]:
    """Each string a gate's status or verdict (``.status``, ``.verdict``, ``["status"]``,
    ``["verdict"]``) is compared with in the file at ``path``."""

    def is_word_holder(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr in ("status", "verdict")
        return isinstance(node, ast.Subscript) and (
            isinstance(node.slice, ast.Constant) and node.slice.value in ("status", "verdict")
        )

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(
            is_word_holder(n) for n in (node.left, *node.comparators)
        ):
            for side in (node.left, *node.comparators):
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                found += [n.value for n in items if isinstance(n, ast.Constant)]
    return found


def test_the_gate_compares_its_verdicts_as_members_of_their_enums():
    """The gate's static status, a config's acceptance and the proposal's outcome are enums
    (``suite.gate.static.StaticStatus``, ``suite.gate.decide.Acceptance``,
    ``ProposalOutcome``), never compared with their words."""
    files = [*(SUITE / "gate").glob("*.py"), SUITE / "cli" / "gate.py"]
    found = {str(path.relative_to(SUITE)): _gate_words(path) for path in files}
    assert {name: words for name, words in found.items() if words} == {}


# The TMA model's rules are one table, kept whole on purpose.
MODULE_LINES = 600
ONE_TABLE = "cuda/rules.py"


def test_no_module_is_over_about_600_lines():
    lines = {
        str(path.relative_to(SUITE)): len(path.read_text().splitlines())
        for path in SUITE.rglob("*.py")
    }
    assert lines.pop(ONE_TABLE) < 2 * MODULE_LINES
    over = {name: n for name, n in lines.items() if n > MODULE_LINES * 1.05}
    assert over == {}, over


def test_the_cuda_tma_domain_has_one_home():
    """The TMA model, the static checks, nvcc builds and the driver probe are defined in
    suite/cuda, the differential over them in suite/tma_differential; the toolkit paths
    reproducer files import only re-export."""
    names = _top_level_names()
    for name in ("TensorMapArgs", "check_tma_copy", "compile_cuda", "encode_with_driver"):
        assert [m for m in names[name] if not m.startswith("cuda/")] == [], (name, names[name])
    for name, home in (("valid_descriptors", "descriptors"), ("make_record", "records")):
        assert names[name] == [f"tma_differential/{home}.py"], (name, names[name])
    for public in ("tma_model.py", "static_check.py", "nvcc.py"):
        tree = ast.parse((SUITE / public).read_text())
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "ImportFrom", "Assign"}, (public, kinds)
        module = __import__(f"suite.{public[:-3]}", fromlist=["__all__"])
        assert all(hasattr(module, name) for name in module.__all__), public


def _engine_imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of each ``from suite.engine... import`` in the file at ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("suite.engine"):
            found.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("suite.engine.")]
    return found


def test_other_packages_use_the_engine_through_its_front_door():
    """Outside ``suite/engine/``, the engine is imported from ``suite.engine`` alone, and
    only names it exports (or one of its modules as a whole)."""
    import suite.engine

    modules = {p.stem for p in (SUITE / "engine").glob("*.py")}
    wrong = []
    for path in SUITE.rglob("*.py"):
        if path.is_relative_to(SUITE / "engine"):
            continue
        for module, names in _engine_imports(path):
            unknown = set(names) - set(suite.engine.__all__) - modules
            if module != "suite.engine" or unknown:
                wrong.append(f"{path.relative_to(SUITE)}: {module} {sorted(unknown)}")
    assert wrong == []
    assert not set(suite.engine.__all__) & modules  # the import system would shadow them
    for name in suite.engine.__all__:
        assert getattr(suite.engine, name) is not None


def test_the_engine_door_lists_each_name_once_under_its_own_name():
    """The door's one list is its imports under TYPE_CHECKING: no second list (``__all__``,
    a table) to keep in step, no name renamed on its way out, no protocol internal."""
    import suite.engine

    tree = ast.parse((SUITE / "engine" / "__init__.py").read_text())
    assigned = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    assert not assigned & {"__all__", "_EXPORTS"}, assigned
    (listed,) = [n for n in tree.body if isinstance(n, ast.If)]
    aliases = [a for n in listed.body if isinstance(n, ast.ImportFrom) for a in n.names]
    assert [a.name for a in aliases if a.asname] == []
    names = [a.name for a in aliases]
    assert len(names) == len(set(names)) == len(suite.engine.__all__)
    internals = {"parse_lines", "typed", "fits", "keeper_argv", "keeper_report"}
    assert internals & set(names) == set()


SHIMS = ("tma_model", "static_check", "nvcc")


def _imports_from(path: Path, modules: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(module, name)`` for every ``from suite.<module> import name`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in {f"suite.{m}" for m in modules}:
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name in {f"suite.{m}" for m in modules}]
    return found


def test_nothing_inside_suite_imports_through_the_re_export_shims():
    """The shims are for reproducer files; the suite itself imports suite.cuda."""
    inside = {
        str(path.relative_to(SUITE)): _imports_from(path, SHIMS)
        for path in SUITE.rglob("*.py")
        if path.stem not in SHIMS
    }
    assert {name: found for name, found in inside.items() if found} == {}


def test_the_shims_keep_every_name_reproducer_files_import():
    root = SUITE.parent
    files = [*root.glob("repros/**/*.py"), *root.glob("tests/**/*.py"), *root.glob("bench/*.py")]
    wanted = {pair for path in files for pair in _imports_from(path, SHIMS)}
    assert {module for module, _ in wanted} == {f"suite.{m}" for m in SHIMS}
    for module, name in wanted:
        shim = __import__(module, fromlist=["__all__"])
        assert name == "" or name in shim.__all__, (module, name)


# ``repro ARGV``, then the names of the modules it imported, into the file named first.
LOADED_BY = """
import json, sys
from suite.cli.main import main
try:
    status = main(sys.argv[2:])
except SystemExit as stop:
    status = stop.code
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "modules": sorted(sys.modules)}, out)
"""
# What a start of a light command must not pay for: each takes a tenth of a second or more.
HEAVY = ("triton", "torch", "rich", "hypothesis", "jinja2", "suite.engine.session")
# The modules of suite/cli that every command imports: the door of none.
SHARED = {"cli", "main", "guard", "completion", "options", "render"}
DOORS = {
    p.stem for p in (SUITE / "cli").glob("*.py") if p.stem not in SHARED | {"__init__", "__main__"}
}


@pytest.mark.parametrize(
    ("argv", "doors"),
    [
        (("--help",), DOORS),
        (("nightly", "show", "--state", "{tmp}"), {"nightly", "baseline"}),
        (("findings", "-o", "{tmp}"), {"explore"}),
    ],
    ids=["help", "nightly-show", "findings"],
)
def test_a_start_imports_its_own_door_and_nothing_heavy(argv, doors, tmp_path):
    """The command modules are imported only for the command chosen (the whole help needs
    them all), and what a command does not use (Triton, rich for plain output, Hypothesis,
    Jinja) is not imported."""
    answer = tmp_path / "loaded.json"
    args = [a.format(tmp=tmp_path) for a in argv]
    done = subprocess.run(
        [sys.executable, "-c", LOADED_BY, str(answer), *args], capture_output=True, text=True
    )
    loaded = json.loads(answer.read_text())
    assert loaded["status"] == 0, done.stderr
    modules = set(loaded["modules"])
    assert {m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY} == set()
    cli = {m.removeprefix("suite.cli.") for m in modules if m.startswith("suite.cli.")}
    assert cli - SHARED == doors


def _argv_modules(path: Path) -> list[str]:
    """Each ``suite.*`` module a list or tuple literal in ``path`` runs with ``-m``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.List, ast.Tuple)):
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            found += [
                str(after)
                for flag, after in itertools.pairwise(words)
                if flag == "-m" and isinstance(after, str) and after.startswith("suite.")
            ]
    return found


def test_the_suite_starts_its_children_through_the_one_entry_point():
    """Only ``suite.children`` names itself after ``-m``: every other module builds a child's
    command line with ``child_argv``, so each child is one role of one registry."""
    own = SUITE / "children.py"
    built = {
        str(path.relative_to(SUITE)): _argv_modules(path)
        for path in SUITE.rglob("*.py")
        if path != own
    }
    assert {name: found for name, found in built.items() if found} == {}


def test_every_child_role_runs_a_function_of_its_own_module():
    from suite.children import ROLES, Role, role_function

    assert set(ROLES) == set(Role)
    for role, where in ROLES.items():
        function = role_function(role)
        assert callable(function), role
        assert f"{function.__module__}:{function.__name__}" == where, role


def test_the_entry_point_imports_nothing_but_the_package():
    """Case children run it under other releases' venvs: it loads no role, and no Triton,
    before it knows which role it runs."""
    program = "import json, sys\nimport {}\nprint(json.dumps(sorted(sys.modules)))"
    loaded = [
        set(json.loads(subprocess.check_output([sys.executable, "-c", program.format(name)])))
        for name in ("suite", "suite.children")
    ]
    assert loaded[1] - loaded[0] == {"suite.children"}


def test_an_unknown_role_is_one_usage_line_and_exit_2():
    from suite.children import ENTRY, child_argv

    with pytest.raises(ValueError, match="no-such-role"):
        child_argv(sys.executable, "no-such-role")  # type: ignore[arg-type]
    done = subprocess.run(
        [sys.executable, "-m", ENTRY, "no-such-role"], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1)


# A module of the suite run with ``-m``, as prose shows it or as a script or test writes it.
SHOWN_MODULE = re.compile(r"""(?:-m\s+|"-m",\s*")(suite(?:\.\w+)*)""")


def _runs_as_a_program(module: str) -> bool:
    """Whether ``python -m module`` runs something: a package with ``__main__.py``, or a
    module with a ``__main__`` block."""
    path = SUITE.parent.joinpath(*module.split("."))
    if (path / "__main__.py").is_file():
        return True
    source = path.with_suffix(".py")
    return source.is_file() and 'if __name__ == "__main__":' in source.read_text()


def test_every_module_shown_run_with_dash_m_runs_as_a_program():
    """What the docs, README, bench scripts, tests and docstrings show run with ``-m`` still
    runs (a child's module is started as ``python -m suite.children ROLE``)."""
    root = SUITE.parent
    files = [
        root / "README.md",
        *root.glob("docs/*.md"),
        *root.glob("bench/**/*.py"),
        *root.glob("bench/**/*.sh"),
        *root.glob("tests/**/*.py"),
        *SUITE.rglob("*.py"),
    ]
    shown = {
        (str(path.relative_to(root)), module)
        for path in files
        for module in SHOWN_MODULE.findall(path.read_text(errors="replace"))
    }
    assert len({module for _, module in shown}) >= 8, shown
    assert sorted(pair for pair in shown if not _runs_as_a_program(pair[1])) == []
