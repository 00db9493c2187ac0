"""What ``repro capture`` records about a compile, a launch and an autotuner, as JSON files.

Standard library only: this module runs inside the user's program (imported by the hook
through ``sitecustomize``, under whatever interpreter the program uses) and in the suite,
which reads the records back. Every record is written to a temporary name, synced and
renamed, so a reader sees a whole record or none, even after the process was killed.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypedDict

ENV_DIR = "REPRO_CAPTURE_DIR"
ENV_ALL = "REPRO_CAPTURE_ALL"
FORMAT = 1
# A compile record keeps at most this many bytes of each output stream: head and tail.
KEEP_BYTES = 64 * 1024

STARTED = "started"  # written before the compile; left behind when the process dies in it
DONE = "done"
FAILED = "failed"
LAUNCHING = "launching"  # a write-ahead launch record: the launch was about to be made


class TargetFacts(TypedDict, total=False):
    """The target a compile or launch was for (empty when the driver could not say)."""

    backend: str
    arch: int | str
    warp_size: int


@dataclass
class FunctionSource:
    """One ``@triton.jit`` function's text, starting at ``def`` (decorators dropped)."""

    name: str
    text: str
    file: str
    line: int
    decorator: str = "triton.jit"  # with the arguments that change codegen (noinline=True)


@dataclass
class GlobalValue:
    """A module-level value a kernel reads: ``python`` is its literal (``tl.constexpr(64)``)."""

    name: str
    python: str


#: The imports every standalone program the suite writes begins with, as (name, module):
#: an import line of the kernel's that binds one of these again is left out.
TEMPLATE_IMPORTS = frozenset({("triton", "triton"), ("tl", "triton.language")})


@dataclass
class ImportLine:
    """How the reproducer gets an importable name back: ``import module as name`` when
    ``attribute`` is empty, else ``from module import attribute as name``."""

    name: str
    module: str
    attribute: str = ""


@dataclass
class KernelSource:
    """The kernel and everything it reads that the reproducer must define or import."""

    name: str
    module: str
    file: str
    line: int
    functions: list[FunctionSource] = field(default_factory=list)  # the kernel last
    values: list[GlobalValue] = field(default_factory=list)
    imports: list[ImportLine] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # names it could not carry over


@dataclass
class ErrorFacts:
    """An exception seen by the program: what ``suite.engine.signature.classify_ending`` reads."""

    type: str
    qualname: str
    message: str
    cause: str
    frames: list[str]  # function names, outermost first
    traceback: str


@dataclass
class CompileOutput:
    """What a compile wrote on file descriptors 1 and 2 of its process (C++ diagnostics,
    ``LLVM ERROR``, assertions, ptxas), head and tail kept; ``*_log`` and ``*_from`` say
    where the text went while the compile ran, for a process that died inside it."""

    stderr: str = ""
    stdout: str = ""
    stderr_log: str = ""
    stderr_from: int = 0
    stdout_log: str = ""
    stdout_from: int = 0
    dropped: int = 0  # bytes left out between head and tail
    complete: bool = False  # the compile returned or raised: the text is whole


@dataclass
class CompileRecord:
    """One call of Triton's compile entry point, written before it runs."""

    id: str
    state: str
    pid: int
    kernel: KernelSource
    signature: dict[str, str]  # runtime arguments by name -> Triton type
    constexprs: dict[str, str]  # compile-time arguments by name -> Python literal
    divisible: list[str]  # arguments with tt.divisibility = 16
    equal_to_1: list[str]  # arguments folded to the constant 1
    attrs: dict[str, list[list[Any]]]  # other raw attributes by argument (3.3 on)
    options: dict[str, object]  # compile options as JSON values
    target: TargetFacts
    triton: str
    python: str
    argv: list[str]
    called_from: str = ""  # file:line of the program's frame that led to the compile
    problems: list[str] = field(default_factory=list)  # what could not be recorded faithfully
    output: CompileOutput | None = None  # None: neither descriptor could be teed
    error: ErrorFacts | None = None
    handled_by: str = ""  # "autotuner": the program caught it (a config the autotuner dropped)
    sequence: int = -1  # the order of compiles and launches in its process
    format: int = FORMAT


@dataclass
class TensorArg:
    """A tensor argument of a launch: its layout, never its data."""

    dtype: str
    shape: list[int]
    strides: list[int]
    device: str


@dataclass
class LaunchRecord:
    """A ``kernel[grid](...)``: written ahead of every launch (``last-launch/<pid>.json``,
    state ``launching``, the process's latest launch), and kept under ``launches/`` when
    the launch raised after its compile succeeded (state ``failed``)."""

    id: str
    pid: int
    kernel: KernelSource
    grid: list[int]
    arguments: list[str]  # the kernel's argument names, in order
    tensors: dict[str, TensorArg]
    scalars: dict[str, object]  # runtime scalars by name (JSON values)
    constexprs: dict[str, str]  # compile-time arguments by name -> Python literal
    options: dict[str, object]  # launch keywords: num_warps, num_stages, ...
    target: TargetFacts
    triton: str
    python: str
    argv: list[str]
    called_from: str = ""
    problems: list[str] = field(default_factory=list)
    error: ErrorFacts | None = None
    handled_by: str = ""
    state: str = LAUNCHING
    sequence: int = -1
    stderr_start: int | None = None  # the program's stderr log size when the launch began
    format: int = FORMAT


@dataclass
class UncaughtRecord:
    """An exception that reached the top of a process that had launched kernels: with the
    launch before it, what a failure reported after its launch (an illegal address seen
    at the next synchronize) is captured from."""

    pid: int
    sequence: int  # the events of the process before it: launches up to sequence - 1
    error: ErrorFacts
    stderr_end: int | None = None
    format: int = FORMAT


@dataclass
class AutotuneRecord:
    """An autotuned kernel's config list, as the program declared it, and what it chose."""

    id: str
    pid: int
    kernel: KernelSource
    key: list[str]
    # meta-parameters + num_warps, num_stages, num_ctas, maxnreg, as JSON values
    configs: list[dict[str, object]]
    chosen: list[dict[str, object]] = field(default_factory=list)
    format: int = FORMAT


def write_durably(path: Path, record: Any) -> None:
    """``record`` (a dataclass) as JSON at ``path``: temporary file, fsync, rename, fsync dir."""
    write_whole(path, json.dumps(asdict(record), indent=1, default=repr).encode(), sync=True)


def write_whole(path: Path, data: bytes, sync: bool) -> None:
    """``data`` at ``path`` through a temporary name and a rename, so that a reader (or a
    process that dies meanwhile) sees the old file or the new one, never a part. ``sync``:
    also on disk before this returns (a process's death loses nothing written either way;
    a machine's crash would)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(handle, data)
        if sync:
            os.fsync(handle)
    finally:
        os.close(handle)
    os.replace(temporary, path)
    if not sync:
        return
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def read_bounded(path: Path | str, start: int, stop: int | None) -> tuple[str, int]:
    """The log's bytes from ``start`` to ``stop`` (its end when None), head and tail kept
    within :data:`KEEP_BYTES`; and how many bytes were left out between them."""
    with open(path, "rb") as log:
        log.seek(start)
        data = log.read() if stop is None else log.read(max(0, stop - start))
    if len(data) <= KEEP_BYTES:
        return data.decode(errors="replace"), 0
    half = KEEP_BYTES // 2
    dropped = len(data) - 2 * half
    joined = data[:half] + f"\n[... {dropped} bytes left out ...]\n".encode() + data[-half:]
    return joined.decode(errors="replace"), dropped


def _mapping(value: object, what: str) -> Mapping[str, object]:
    """A JSON object read back, or TypeError naming what was not one."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} is a {type(value).__name__}, not a JSON object")
    return value


def _mappings(record: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    """The JSON objects listed under ``key`` (none when it is absent)."""
    value = record.get(key, [])
    if not isinstance(value, list):
        raise TypeError(f"{key} is a {type(value).__name__}, not a JSON list")
    return [_mapping(item, key) for item in value]


def _build(kind: type, data: object) -> Any:
    """A record of dataclass ``kind`` from the JSON object ``data`` (unknown keys left out)."""
    known = {f.name for f in fields(kind)}
    return kind(**{k: v for k, v in _mapping(data, kind.__name__).items() if k in known})


def _kernel(data: object) -> KernelSource:
    kernel = _build(KernelSource, data)
    source = _mapping(data, "kernel")
    kernel.functions = [_build(FunctionSource, f) for f in _mappings(source, "functions")]
    kernel.values = [_build(GlobalValue, v) for v in _mappings(source, "values")]
    kernel.imports = [_build(ImportLine, i) for i in _mappings(source, "imports")]
    return kernel


def _error(data: object) -> ErrorFacts | None:
    return _build(ErrorFacts, data) if data else None


def load_compile(path: Path) -> CompileRecord:
    data = json.loads(path.read_text())
    record: CompileRecord = _build(CompileRecord, data)
    record.kernel = _kernel(data["kernel"])
    record.error = _error(data.get("error"))
    output = data.get("output")
    record.output = _build(CompileOutput, output) if output else None
    return record


def load_launch(path: Path) -> LaunchRecord:
    return _launch(json.loads(path.read_text()))


def _launch(data: object) -> LaunchRecord:
    record: LaunchRecord = _build(LaunchRecord, data)
    launch = _mapping(data, "launch")
    record.kernel = _kernel(launch["kernel"])
    tensors = _mapping(launch.get("tensors", {}), "tensors")
    record.tensors = {n: _build(TensorArg, t) for n, t in tensors.items()}
    record.error = _error(launch.get("error"))
    return record


def load_uncaught(path: Path) -> UncaughtRecord:
    data = json.loads(path.read_text())
    record: UncaughtRecord = _build(UncaughtRecord, data)
    error = _error(data.get("error"))
    assert error is not None
    record.error = error
    return record


def load_last_launches(folder: Path) -> dict[int, tuple[Path, LaunchRecord]]:
    """Each process's latest write-ahead launch in ``folder`` (``last-launch/``): of its two
    slots, the one with the higher sequence that parses (a slot may hold the tail of an
    older, longer record after its end, or be torn by a death mid-write)."""
    latest: dict[int, tuple[Path, LaunchRecord]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data, _ = json.JSONDecoder().raw_decode(path.read_text(errors="replace"))
            record = _launch(data)
        except (ValueError, TypeError, KeyError):
            continue
        known = latest.get(record.pid)
        if known is None or known[1].sequence < record.sequence:
            latest[record.pid] = (path, record)
    return latest


def load_autotune(path: Path) -> AutotuneRecord:
    data = json.loads(path.read_text())
    record: AutotuneRecord = _build(AutotuneRecord, data)
    record.kernel = _kernel(data["kernel"])
    return record
