"""Triton's hash of its own install is computed once per install, not once per case process
(``suite.engine.triton_key``): the environment probe keeps it, a case's process reads it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from suite.engine import discover
from suite.engine.environment import capture_environment
from suite.engine.expand import CaseSpec
from suite.engine.runner import Execution, Workers, run_case
from suite.files import cache_root

# A compile that says which key its Triton hands to the compiler, then fails (so the engine
# keeps its message): Triton's cache key of every compile starts with this value.
KEY_READER = """
import importlib

import triton  # noqa: F401  (as reproducers do: a compile ahead)

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="key-reader",
    title="A compile that reports Triton's key of its own install",
    family="test",
    params=(Choice("n", (1,)),),
    configs={"all": [{"n": 1}]},
    targets=("sm_90",),
    label="{n}",
)


@REPRO.compile
def compile_case(case):
    for home in ("triton.runtime.cache", "triton.compiler.compiler"):
        module = importlib.import_module(home)
        if hasattr(module, "triton_key"):
            raise RuntimeError("the key starts " + module.triton_key()[:40])
"""


def _own_key() -> str:
    """This interpreter's Triton computing its key, as a first compile does."""
    for home in ("triton.runtime.cache", "triton.compiler.compiler"):
        module = importlib.import_module(home)
        function = getattr(module, "triton_key", None)
        if function is not None:
            return str(function.__wrapped__())
    raise AssertionError("this Triton has no triton_key")


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return cache_root() / "triton-key"


def test_the_probe_keeps_the_key_triton_computes(fresh_cache: Path) -> None:
    capture_environment(sys.executable)
    [kept] = fresh_cache.iterdir()
    assert kept.read_text() == _own_key()


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_a_case_compiles_with_the_kept_key(fresh_cache: Path, tmp_path: Path, warm: bool) -> None:
    capture_environment(sys.executable)
    [kept] = fresh_cache.iterdir()
    kept.write_text("a key kept for this install")  # what a case's process reads, not computes
    program = tmp_path / "key_reader.py"
    program.write_text(KEY_READER)
    found = discover.from_source({"path": str(program)}, str(program))[0]
    spec = CaseSpec(found, {"n": 1}, "sm_90")
    execution = Execution(warm=warm)
    with Workers(execution, [spec]) as workers:
        result = run_case(spec, tmp_path / "case", execution, workers if warm else None)
    assert "the key starts a key kept for this install" in result.message, result.message
