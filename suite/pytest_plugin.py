"""The regression suite as pytest items: ``pytest --repro``.

One item per reproducer x config x target, e.g.
``tma-gemm-prefetch[sm_100-64x64x32-w4-s2]``. Every item runs through the
engine's isolation (a warm template per pytest process, so it works under
``-n auto``), never in the pytest process itself.

Known failures from the baseline become strict xfails that also check the
signature: the expected failure raises :class:`KnownFailure`, the only
exception the xfail accepts, so a different failure on a known-bug case fails
the test, and a pass is XPASS(strict), CI's "fixed upstream" signal (exit 3 of
``repro run``). On a release at or after an entry's ``fixed_in`` its cases are
plain tests: they are expected to pass, and the old failure is a regression.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from suite.engine import (
    Baseline,
    Bounds,
    CaseResult,
    CaseSpec,
    Execution,
    Outcome,
    Selection,
    Verdict,
    Workers,
    capture_environment,
    command_there,
    plan,
    run_one,
)
from suite.errors import UsageError


class KnownFailure(Exception):
    """A case failed exactly as the baseline says (the one exception its xfail accepts)."""


class CaseFailed(Exception):
    """A case failed in a way the baseline does not list."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("repro", "triton-repro-suite regression cases")
    group.addoption("--repro", action="store_true", help="collect the reproducer catalogue")
    group.addoption(
        "--repro-select", action="append", default=[], help="reproducer ids or files (default: all)"
    )
    group.addoption("--repro-target", action="append", default=[], help="targets, e.g. sm_100")
    group.addoption("--repro-configs", action="append", default=[], help="config sets")
    group.addoption(
        "--repro-gpu",
        choices=("auto", "on", "off"),
        default="off",
        help="launch cases on a visible GPU (default: off)",
    )
    group.addoption("--repro-python", default="", help="interpreter whose Triton runs the cases")
    group.addoption("--repro-baseline", default="", help="expectations file")
    group.addoption("--repro-timeout", type=float, default=600.0, help="seconds per case")
    group.addoption(
        "--repro-isolation",
        choices=("warm", "fresh"),
        default="warm",
        help="fork cases from a warm template (default) or start fresh interpreters",
    )


def _split(values: list[str]) -> list[str]:
    return [v for value in values for v in value.split(",") if v]


class ReproSession:
    """Per pytest process: the selection, the environment, the baseline and the workers."""

    def __init__(self, config: pytest.Config) -> None:
        option = config.option
        self.selection = Selection(
            repros=_split(option.repro_select),
            targets=_split(option.repro_target),
            sets=_split(option.repro_configs),
            gpu=option.repro_gpu,
            python=option.repro_python,
        )
        self.execution = Execution(
            python=option.repro_python or Execution().python,
            bounds=Bounds(timeout_s=option.repro_timeout),
            warm=option.repro_isolation == "warm",
        )
        try:
            self.baseline = Baseline.load(
                Path(option.repro_baseline) if option.repro_baseline else None
            )
            self.environment = capture_environment(self.execution.python)
            self.specs = plan(self.selection, self.environment)
        except UsageError as exc:
            # Bad input is exit 2 and one line, under pytest as under `repro`.
            pytest.exit(f"repro: error: {exc}", returncode=2)
        self.triton = str(self.environment.triton)
        self.output = Path(tempfile.mkdtemp(prefix="repro-pytest-"))
        self._workers: Workers | None = None

    @property
    def workers(self) -> Workers:
        if self._workers is None:
            self._workers = Workers(self.execution, self.specs)
            atexit.register(self._workers.close)
        return self._workers


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "repro: a case of the reproducer catalogue")
    if config.getoption("repro", default=False):
        config.stash[_SESSION] = ReproSession(config)


_SESSION = pytest.StashKey[ReproSession]()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's scratch folder goes with it (failures are shown in the report)."""
    repro = config.stash.get(_SESSION, None)
    if repro is not None:
        if repro._workers is not None:
            repro._workers.close()
        shutil.rmtree(repro.output, ignore_errors=True)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With --repro, the catalogue is the test suite: no test files are collected."""
    if _SESSION in config.stash:
        return True
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if _SESSION not in config.stash:
        return
    repro = config.stash[_SESSION]
    for spec in repro.specs:
        item = ReproItem.from_parent(session, name=spec.case_id, spec=spec)
        item.add_marker(pytest.mark.repro)
        probe = _covering(repro, spec)
        if probe:
            reason = f"known: {probe.id} ({probe.kind}) {probe.signature}"
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=KnownFailure))
        items.append(item)


def _covering(repro: ReproSession, spec: CaseSpec) -> Any:
    """The baseline expectation that speaks about this case, if any (whatever its outcome)."""
    shell = CaseResult(spec.case_id, spec.repro.id, spec.target, spec.config, Outcome.PASSED)
    return next((e for e in repro.baseline.expectations if e.covers(shell, repro.triton)), None)


class ReproItem(pytest.Item):
    """One case, run in isolation and judged by the baseline."""

    def __init__(self, *, spec: CaseSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.result: Any = None

    def runtest(self) -> None:
        repro = self.config.stash[_SESSION]
        case_dir = repro.output / "cases" / self.name.replace("/", "_")
        result = run_one(self.spec, case_dir, repro.execution, repro.workers)
        result = repro.baseline.judge(result, repro.triton)
        self.result = result
        self.user_properties.append(("outcome", result.outcome.label))
        self.user_properties.append(("signature", str(result.signature or "")))
        if result.outcome is Outcome.SKIPPED:
            pytest.skip(result.message)
        if result.verdict is Verdict.NEEDS_GPU:
            command = f"pytest --repro --repro-select {result.repro} --repro-gpu on"
            pytest.skip(command_there(command, result.target))
        if result.verdict is Verdict.REFUSED:
            pytest.skip(f"Triton refuses it: {result.message}")
        if result.verdict is Verdict.KNOWN:
            raise KnownFailure(f"{result.signature}: {result.message}")
        if result.outcome.is_failure:
            stderr = Path(result.artifacts.get("stderr.txt", "/nonexistent"))
            tail = stderr.read_text(errors="replace")[-4000:] if stderr.is_file() else ""
            raise CaseFailed(
                f"{result.outcome.label}: {result.signature}\n{result.message}\n{tail}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (CaseFailed, KnownFailure)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.spec.found.source.get("path", self.spec.repro.id)), None, self.name
