"""Execute cases: each in its own process, cache and reproducer path.

A cached kernel skips the compiler passes and so hides a compiler crash;
every case therefore gets a fresh ``TRITON_CACHE_DIR`` (removed afterwards)
and its own ``TRITON_REPRODUCER_PATH``, so the MLIR reproducer of a failing
pass lands beside the case's captured output.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from suite.children import Role, child_argv
from suite.engine.case_files import Kept, keep_outputs, regular_at
from suite.engine.classify import classify
from suite.engine.defaults import DEFAULTS, Bounds
from suite.engine.expand import CaseSpec
from suite.engine.gpu_check import (
    check_after,
    machine_lock,
    machine_locks,
    machine_locks_path,
)
from suite.engine.gpu_evidence import needs_gpu
from suite.engine.isolate import BoundedOutput, Exit, run_isolated, stop_all
from suite.engine.launch import GPU_HOLD, GPU_LOCK
from suite.engine.outcome import CaseResult, Outcome, OutputBytes, RunNotes
from suite.engine.protocol import EVENTS, ChildReport, ChildSpec, LaunchWatch
from suite.engine.ptxas import Relaunch, Relaunched
from suite.engine.ptxas import gather as ptxas_differential
from suite.engine.record import RunStore
from suite.engine.sanitizer import Rerun, gather
from suite.engine.scrub import scrub_secrets, scrub_tree
from suite.engine.shim import child_env
from suite.engine.warm import Template, WarmUnavailable, run_warm
from suite.engine.wire import parse_lines
from suite.toolchain.limits import limits_for

# A template that keeps dying (a reproducer that kills it) is given up after this many starts.
_TEMPLATE_STARTS = 3


@dataclass(frozen=True)
class Execution:
    """How cases are run: which interpreter, within which bounds, how many at once."""

    python: str = sys.executable
    bounds: Bounds = field(default_factory=lambda: DEFAULTS.bounds)
    workers: int = 1
    keep_passing: bool = False
    warm: bool = field(default_factory=lambda: DEFAULTS.warm)
    gpus: tuple[str, ...] = ()
    # A launch that faults or gives a wrong result is run again under compute-sanitizer.
    sanitize: bool = True
    # ... and relaunched with its PTX assembled by another ptxas build and at -O0.
    ptxas_differential: bool = True
    # Cases expected to fault (a reduction of a launch fault): after each case that launched
    # on a GPU of ``gpus`` a fresh process must make a CUDA context there, else the run stops
    # (``GpuStopped``). A case whose launch raised holds its GPU to its exit, as always; one
    # that did not lets it go after its launches (its oracles and its exit need no turn).
    faults: bool = False


class Workers:
    """Starts cases: forked from a warm template, or as fresh interpreters.

    Also hands out GPUs: a case that launches gets one visible GPU (``CUDA_VISIBLE_DEVICES``)
    and that GPU's lock file (``GPU_LOCK``), which it holds around each launch: up to
    ``execution.workers`` cases per GPU run side by side, and their launches on one GPU are
    one at a time. A launch that raises (a fault) keeps the lock until its process has ended,
    and on a real GPU the GPU is checked after it (holding the lock: no launch meanwhile).
    With ``execution.faults`` the GPU is checked after each case that launched.
    """

    def __init__(self, execution: Execution, specs: Sequence[CaseSpec] = ()) -> None:
        self.execution = execution
        paths = {s.found.source["path"] for s in specs if "path" in s.found.source}
        self._preload = sorted(paths) + (["torch"] if any(s.gpu for s in specs) else [])
        self._archs = sorted({limits_for(s.target).arch for s in specs})
        self._template: Template | None = None
        self._starts = 0
        self.cold_reason = ""  # why cases run fresh although warm was asked for
        self._lock = threading.Lock()
        self._gpus: queue.Queue[str] = queue.Queue()
        for _ in range(max(1, execution.workers)):
            for gpu in execution.gpus or ("0",):
                self._gpus.put(gpu)
        self._gpu_locks: list[Path] = []  # the folder of the GPUs' lock files, once made

    def _warm(self) -> Template | None:
        """The running template, started (again) if need be; None once it cannot start."""
        with self._lock:
            if self._template is not None and self._template.alive:
                return self._template
            if self._template is not None:
                self._template.close()
                self._template = None
            if self._starts >= _TEMPLATE_STARTS:
                return None
            self._starts += 1
            try:
                self._template = Template(
                    self.execution.python,
                    child_env(),
                    self._preload,
                    self._archs,
                    self.execution.bounds.timeout_s,
                )
            except WarmUnavailable as exc:
                self.cold_reason = str(exc)
                self._starts = _TEMPLATE_STARTS
            return self._template

    def share_gpus(self, other: Workers) -> None:
        """Take GPUs from ``other``'s pool: launches of both (two interpreters, say) are one
        at a time per GPU too."""
        self._gpus = other._gpus
        self._gpu_locks = other._gpu_locks

    def fresh_because(self, target: str) -> str:
        """Why a case of ``target`` runs as a fresh interpreter ("" when it is forked warm)."""
        if not self.execution.warm:
            return ""
        template = self._warm()
        if template is None:
            return self.cold_reason or "the warm template could not start"
        if target and limits_for(target).arch in template.failed_warm_up:
            return f"the warm template's warm-up compile for {target} failed"
        return ""

    def run(
        self,
        spec_file: Path,
        env: dict[str, str],
        cwd: Path,
        gpu: bool,
        target: str = "",
        watch: LaunchWatch | None = None,
    ) -> Exit:
        bounds = self.execution.bounds
        gpu_id = self._gpus.get() if gpu else None
        try:
            if gpu_id is not None:
                env = {**env, GPU_LOCK: str(self._lock_path(gpu_id))}
            if gpu_id is not None and self.execution.gpus:
                env = {**env, "CUDA_VISIBLE_DEVICES": gpu_id}
            template = self._warm() if self.execution.warm else None
            if template is not None and not self.fresh_because(target):
                try:
                    return run_warm(template, str(spec_file), env, str(cwd), bounds, watch)
                except WarmUnavailable:
                    pass  # it died before forking this case: the case runs fresh
            argv = child_argv(self.execution.python, Role.CASE, str(spec_file))
            return run_isolated(argv, env=env, cwd=str(cwd), bounds=bounds, watch=watch)
        finally:
            if gpu_id is not None:
                try:
                    # A launch that did not finish (a fault, a crash, a hang killed) held the
                    # GPU until its process ended: the GPU answers before the next launch.
                    # A reduction of a fault checks after every case that launched; a case
                    # that never launched (its kernel did not compile) left the GPU as it was.
                    checked = watch is not None and (
                        watch.unfinished() or (self.execution.faults and watch.launched())
                    )
                    if checked and self.execution.gpus:
                        self._check(gpu_id)
                finally:
                    self._gpus.put(gpu_id)

    def _check(self, gpu_id: str) -> None:
        """A fresh process makes a CUDA context on the GPU, no case launching there
        meanwhile; ``GpuStopped`` when it does not."""
        check_after(gpu_id, self._lock_path(gpu_id))

    def _lock_path(self, gpu_id: str) -> Path:
        return self._lock_folder() / f"gpu-{gpu_id}.lock"

    def _lock_folder(self) -> Path:
        """Real GPUs (``execution.gpus``): the lock files every repro process of this user
        on this machine shares, so runs side by side take turns on a GPU too; else (the
        interpreter's stand-in GPU) a folder of this run's own."""
        with self._lock:
            if not self._gpu_locks:
                shared = machine_locks() if self.execution.gpus else None
                made = shared or Path(tempfile.mkdtemp(prefix="repro-gpu-locks-"))
                self._gpu_locks.append(made)
            return self._gpu_locks[0]

    def close(self) -> None:
        for folder in self._gpu_locks:
            if folder != machine_locks_path():  # shared: other runs hold its locks
                shutil.rmtree(folder, ignore_errors=True)
        if self._template is not None:
            self._template.close()
            self._template = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fresh_folder(folder: Path) -> None:
    """``folder`` empty and real: whatever a previous attempt (or a case) left there removed.
    A link or file a case planted as the run's ``cases`` folder goes too (only the link: its
    target is never touched), so that no case folder is made through it."""
    for level in (folder.parent, folder):
        if level.is_symlink() or (level.exists() and not level.is_dir()):
            level.unlink()
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tmp").mkdir()


def _scrubbed(exit: Exit) -> Exit:
    """``exit`` with secrets taken out of its captured output, before anything reads it."""
    streams = [
        BoundedOutput(scrub_secrets(c.text), c.total_bytes, c.dropped_bytes)
        for c in (exit.stdout, exit.stderr)
    ]
    return replace(exit, stdout=streams[0], stderr=streams[1])


def _events(report: Path) -> ChildReport:
    """What the child reported, its secrets taken out: a case may write anything there, or
    plant a link or a FIFO in its place (then it reported nothing)."""
    try:
        folder = os.open(report.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return ChildReport()
    try:
        found = regular_at(folder, report.name)
    finally:
        os.close(folder)
    if found is None:
        return ChildReport()
    return ChildReport.of([scrub_tree(r) for r in parse_lines(found[0].decode(errors="replace"))])


class CaseInterrupted(Exception):
    """The run was stopped while the case ran: it has no result (``--resume`` runs it again)."""


def run_case(
    spec: CaseSpec,
    case_dir: Path,
    execution: Execution,
    workers: Workers | None = None,
    knobs: Mapping[str, str] | None = None,
) -> CaseResult:
    """Run one case in isolation and classify it. Never raises for what the case does;
    raises :class:`CaseInterrupted` when the run is stopped meanwhile.

    Without ``workers`` the case runs as a fresh interpreter. ``knobs`` are more
    environment variables for the case (Triton's dump knobs, say). The steps: write its
    spec, run its child, judge what it left, keep its files, rerun a failed launch.
    """
    _fresh_folder(case_dir)
    spec_file = _write_spec(spec, case_dir, execution)
    env = _case_env(case_dir, knobs)
    exit, fresh_because = _run_child(spec, spec_file, env, case_dir, execution, workers)
    # Secrets out first: the signature is normalized from this text, and kept with the case.
    exit = _scrubbed(exit)
    events = _events(case_dir / EVENTS)
    unreadable = None
    if events.unreadable:
        # The case wrote events of its own making: judge it by how it ended alone (it did
        # start: someone wrote them, so it is not the harness's failure to start).
        events = ChildReport(unreadable=True)
        unreadable = "unreadable: the case wrote events the engine cannot read"
    verdict = classify(events, exit, limits_for(spec.target))
    folder_lost = not case_dir.is_dir() or case_dir.is_symlink()
    if folder_lost:
        _fresh_folder(case_dir)  # the case removed or replaced its own folder
    kept = _keep(case_dir, verdict.outcome.is_failure or execution.keep_passing, exit)
    output_bytes = OutputBytes(exit.stdout.total_bytes, exit.stderr.total_bytes) if kept else None
    kept = kept or Kept({}, [], [])
    launched = spec.gpu or not spec.repro.launches
    notes = RunNotes(
        events=unreadable,
        stragglers_killed=exit.stragglers_killed or None,
        isolation=f"fresh: {fresh_because}" if fresh_because else None,
        case_folder="removed or replaced by the case; its events are lost" if folder_lost else None,
        launched_on=(events.start.cuda_visible_devices if events.start else None,)
        if spec.gpu
        else None,
        not_launched=None if launched else needs_gpu(spec.target),
        planted=tuple(kept.planted) or None,
        lost=tuple(kept.lost) or None,
        output_bytes=output_bytes,
    )
    result = CaseResult(
        case_id=spec.case_id,
        repro=spec.repro.id,
        target=spec.target,
        config=spec.config,
        outcome=verdict.outcome,
        signature=verdict.signature,
        message=verdict.message,
        site=verdict.site,
        facts=verdict.facts,
        notes=notes,
        metrics=verdict.metrics,
        gpu=spec.gpu,
        duration_s=round(exit.duration_s, 3),
        artifacts=kept.artifacts,
    )
    return _rerun_failed_launch(result, spec, spec_file, case_dir, env, events, execution)


def _write_spec(spec: CaseSpec, case_dir: Path, execution: Execution) -> Path:
    """The case's spec file, which its child reads."""
    spec_file = case_dir / "spec.json"
    child_spec = ChildSpec(
        source=spec.found.source,
        repro_id=spec.repro.id,
        config=spec.config,
        target=spec.target,
        gpu=spec.gpu,
        report=str(case_dir / EVENTS),
        timeout=execution.bounds.timeout_s,
    )
    spec_file.write_text(child_spec.to_json())
    return spec_file


def _case_env(case_dir: Path, knobs: Mapping[str, str] | None) -> dict[str, str]:
    return child_env(
        {
            "TRITON_CACHE_DIR": str(case_dir / "cache"),
            "TRITON_REPRODUCER_PATH": str(case_dir / "mlir-reproducer"),
            # Its temporary files go where they are removed with it (a case leaves 300 MB).
            "TMPDIR": str(case_dir / "tmp"),
            "PYTHONUNBUFFERED": "1",
            "PYTHONFAULTHANDLER": "1",
            **(knobs or {}),
        }
    )


def _run_child(
    spec: CaseSpec,
    spec_file: Path,
    env: dict[str, str],
    case_dir: Path,
    execution: Execution,
    workers: Workers | None,
) -> tuple[Exit, str]:
    """The case's child run to its end, and why it ran as a fresh interpreter ("" if not)."""
    # A launch past the hang oracle's bound is killed as the timeout kills a case.
    watch = LaunchWatch(str(case_dir / EVENTS)) if spec.gpu else None
    if workers is None:
        with Workers(replace(execution, warm=False)) as fresh:
            exit = fresh.run(spec_file, env, case_dir, spec.gpu, spec.target, watch)
        fresh_because = ""
    else:
        fresh_because = workers.fresh_because(spec.target)
        exit = workers.run(spec_file, env, case_dir, spec.gpu, spec.target, watch)
    if exit.interrupted:
        raise CaseInterrupted(spec.case_id)
    return exit, fresh_because


def _keep(case_dir: Path, keep: bool, exit: Exit) -> Kept | None:
    """The case's files kept (a failure's, or every case's with ``keep_passing``), else the
    case folder removed; its Triton cache and temporary files go either way."""
    shutil.rmtree(case_dir / "cache", ignore_errors=True)
    shutil.rmtree(case_dir / "tmp", ignore_errors=True)
    if keep:
        return keep_outputs(case_dir, exit.stdout.text, exit.stderr.text)
    shutil.rmtree(case_dir, ignore_errors=True)
    return None


def _rerun_failed_launch(
    result: CaseResult,
    spec: CaseSpec,
    spec_file: Path,
    case_dir: Path,
    env: dict[str, str],
    events: ChildReport,
    execution: Execution,
) -> CaseResult:
    """A failed launch run again: under the sanitizers, and with each ptxas build."""
    failure = _launch_failure(result)
    # Triton's interpreter runs the kernel as NumPy on the CPU: nothing for a sanitizer to see.
    interpreted = env.get("TRITON_INTERPRET") == "1"
    if not failure or interpreted:
        return result
    if execution.gpus and events.start and events.start.cuda_visible_devices:
        # A rerun of a failed launch runs alone on the case's GPU, checked after it.
        env = {**env, "CUDA_VISIBLE_DEVICES": events.start.cuda_visible_devices}
    if execution.sanitize:
        evidence = gather(
            failure, execution.python, case_dir, _rerun(spec_file, case_dir, env, execution)
        )
        outputs = {f"sanitizer-{t}": p for t, p in evidence.outputs.items()}
        result = replace(
            result,
            notes=replace(result.notes, sanitizer=evidence.to_json()),
            artifacts={**result.artifacts, **outputs},
        )
    if execution.ptxas_differential and result.signature:
        differential = ptxas_differential(
            result.signature.text,
            execution.python,
            limits_for(spec.target).arch,
            case_dir,
            _relaunch(spec_file, case_dir, env, execution, spec.target),
        )
        result = replace(result, notes=replace(result.notes, ptxas=differential.to_json()))
    return result


def _launch_failure(result: CaseResult) -> str:
    """``fault`` or ``wrong-result`` for a launch that failed so, else ""."""
    if not result.gpu:
        return ""
    if result.outcome is Outcome.WRONG_RESULT:
        return "wrong-result"
    launching = result.site.phase in (None, "launch")
    if result.outcome is Outcome.RUNTIME_ERROR or (result.outcome is Outcome.CRASH and launching):
        return "fault"
    return ""


def _child_again(
    spec_file: Path,
    case_dir: Path,
    name: str,
    prefix: Sequence[str],
    env: Mapping[str, str],
    execution: Execution,
) -> tuple[Exit, Path]:
    """The case's child run again as a fresh interpreter behind ``prefix``, with ``env``, its
    own spec and events file named ``name`` in the case folder; the exit and the events file.
    The case's own temporary folder went with it: the rerun gets a fresh one, gone with it."""
    report = case_dir / f"{name}.events.jsonl"
    again = case_dir / f"{name}.spec.json"
    again.write_text(replace(ChildSpec.read(spec_file), report=str(report)).to_json())
    scratch = case_dir / "tmp"
    scratch.mkdir(exist_ok=True)
    gpu = env.get("CUDA_VISIBLE_DEVICES") if execution.gpus else None
    # It relaunches a launch that failed: its start, CUDA context and compiles side by side
    # with others, then the GPU's lock held from its first launch to its exit (nothing
    # launches beside it), and the GPU checked after it (still nothing launching there).
    lock = machine_lock(gpu) if gpu else None
    turns = {GPU_LOCK: str(lock), GPU_HOLD: "1"} if lock is not None else {}
    try:
        ended = run_isolated(
            [*prefix, *child_argv(execution.python, Role.CASE, str(again))],
            env={**{k: v for k, v in env.items() if k not in (GPU_LOCK, GPU_HOLD)}, **turns},
            cwd=str(case_dir),
            bounds=execution.bounds,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if gpu:
        check_after(gpu, lock)
    return ended, report


def _rerun(spec_file: Path, case_dir: Path, env: dict[str, str], execution: Execution) -> Rerun:
    """The case run again behind ``prefix`` (compute-sanitizer), each tensor its own
    allocation (exact bounds for memcheck)."""

    def rerun(
        prefix: Sequence[str], more: Mapping[str, str], output: Path
    ) -> tuple[int | None, str]:
        allocations = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
        ended, _ = _child_again(
            spec_file,
            case_dir,
            output.with_suffix("").name,
            prefix,
            {**env, **allocations, **more},
            execution,
        )
        text = scrub_secrets(ended.stdout.text + ended.stderr.text)
        output.write_text(text)
        return ended.returncode, text

    return rerun


def _relaunch(
    spec_file: Path, case_dir: Path, env: dict[str, str], execution: Execution, target: str
) -> Relaunch:
    """The case launched again with more environment (another ptxas, its own cache folder),
    classified as the case was."""
    counter = iter(range(1 << 16))

    def relaunch(more: Mapping[str, str]) -> Relaunched:
        name = f"ptxas-relaunch-{next(counter)}"
        ended, report = _child_again(spec_file, case_dir, name, (), {**env, **more}, execution)
        ended = _scrubbed(ended)
        (case_dir / f"{name}.output.txt").write_text(ended.stdout.text + ended.stderr.text)
        verdict = classify(_events(report), ended, limits_for(target))
        signature = verdict.signature.text if verdict.signature else ""
        return Relaunched(verdict.outcome.label, signature, verdict.message)

    return relaunch


def execute(
    specs: Sequence[CaseSpec],
    store: RunStore,
    execution: Execution,
    on_result: Callable[[CaseResult], CaseResult] = lambda r: r,
) -> list[CaseResult]:
    """Run every case, appending each result to the store as soon as it ends.

    ``on_result`` sees each result first (the baseline's verdict goes in there).
    Interrupted (a signal raises in this thread), it stops at once: queued cases never
    start, running ones are killed with their trees and left unrecorded, finished ones
    are recorded, and the interruption goes on up.
    """
    results: list[CaseResult] = []
    workers = Workers(execution, specs)
    recorded: set[Future[CaseResult]] = set()

    def one(spec: CaseSpec) -> CaseResult:
        return run_case(spec, store.case_dir(spec.case_id), execution, workers)

    def record(future: Future[CaseResult]) -> None:
        recorded.add(future)
        try:
            result = future.result()
        except CaseInterrupted:
            return
        judged = on_result(result)
        store.append(judged)
        results.append(judged)

    pool = ThreadPoolExecutor(max_workers=max(1, execution.workers))
    futures = [pool.submit(one, spec) for spec in specs]
    try:
        for future in as_completed(futures):
            record(future)
    except BaseException:
        stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        for future in futures:
            if future.done() and not future.cancelled() and future not in recorded:
                with contextlib.suppress(Exception):
                    record(future)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        workers.close()
    return results
