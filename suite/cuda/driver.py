"""The real ``cuTensorMapEncodeTiled``, called through NVIDIA's cuda-bindings.

``suite.tma_model`` restates what the documentation says the driver accepts; this module asks
the driver itself, so the two can be compared (``bench/tma_differential.py``). It needs
cuda-bindings (``pip install cuda-bindings``, 12.x or 13.x; the ``gpu`` extra) and a GPU with
a driver, but no memory: the encode only records the global address, so an aligned or
misaligned *integer* address is enough. No ctypes.

* :func:`encode_with_driver` encodes one :class:`~suite.tma_model.TensorMapArgs` in this
  process and returns the ``CUresult`` name (``"CUDA_SUCCESS"``,
  ``"CUDA_ERROR_INVALID_VALUE"``, ...).
* :func:`driver_call` is the pure-Python half (no GPU): the exact argument lists handed to the
  driver, which is what a standalone reproducer script embeds.
* :class:`IsolatedDriver` runs the encodes in a child process (``python -m suite.children
  cuda-driver``) so that a driver crash on a strange descriptor costs one result
  (``"CRASH:SIGSEGV"``), not the whole run.

Zero-length arrays. cuda-bindings passes an empty list as a NULL pointer, and the reference
says a rank-1 map reads ``rank - 1 = 0`` strides, so NULL should be fine; but an H200 refused
every rank-1 encode of a program that passed NULL (docs/tma-descriptor-model.md, "Suspected
disagreement: rank-1 global size"). By default an empty array is therefore passed as a
one-entry array (the driver is documented to read none of it): for ``globalStrides`` the
tensor's byte size rounded up to 16, a value no plausible stride check refuses, so it cannot
itself cause a rejection; ``null_empty_arrays=True`` passes NULL instead, to probe that.
"""

from __future__ import annotations

import functools
import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from suite.children import Role, child_argv
from suite.cuda.model import TensorMapArgs, element_size_bits

__all__ = [
    "DriverUnavailable",
    "IsolatedDriver",
    "args_from_dict",
    "args_to_dict",
    "driver_call",
    "driver_info",
    "encode_call",
    "encode_with_driver",
]


class DescriptorArgs(TypedDict):
    """A :class:`TensorMapArgs` as JSON (:func:`args_to_dict`): enums by member name."""

    dtype: str
    rank: int
    global_address: int
    global_dim: list[int]
    global_strides: list[int]
    box_dim: list[int]
    element_strides: list[int]
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str


class DriverCall(TypedDict):
    """The values handed to ``cuTensorMapEncodeTiled`` (:func:`driver_call`); ``None`` is NULL."""

    dtype: int
    rank: int
    address: int
    global_dim: list[int] | None
    global_strides: list[int] | None
    box_dim: list[int] | None
    element_strides: list[int] | None
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int


class DriverInfo(TypedDict, total=False):
    """What the driver says of itself (each fact only when it could be asked)."""

    driver_version: int
    device: str
    bindings_version: str


class Request(TypedDict, total=False):
    """One line to the driver child: an encode or an allocation."""

    call: DriverCall
    alloc: int


class Answer(TypedDict, total=False):
    """One line from the driver child (:func:`serve`), or ``lost`` when it died on a request."""

    ready: bool
    info: DriverInfo
    fatal: str
    result: str
    error: str
    ptr: int
    lost: str


SUCCESS = "CUDA_SUCCESS"
_U64 = 2**64
_U32 = 2**32
ROOT = Path(__file__).resolve().parents[2]


class DriverUnavailable(RuntimeError):
    """cuda-bindings cannot be imported, or the driver cannot be initialised (no GPU)."""


# --------------------------------------------------------------------------------------------
# Descriptors as plain data (JSON lines, reproducer scripts).
# --------------------------------------------------------------------------------------------


def args_to_dict(args: TensorMapArgs) -> DescriptorArgs:
    """A JSON-ready dict of ``args``; enums by their ``cuda.h``-less member names."""
    return {
        "dtype": args.dtype.name,
        "rank": args.rank,
        "global_address": args.global_address,
        "global_dim": list(args.global_dim),
        "global_strides": list(args.global_strides),
        "box_dim": list(args.box_dim),
        "element_strides": list(args.element_strides),
        "interleave": args.interleave.name,
        "swizzle": args.swizzle.name,
        "l2_promotion": args.l2_promotion.name,
        "oob_fill": args.oob_fill.name,
    }


def args_from_dict(data: Mapping[str, Any]) -> TensorMapArgs:
    """The inverse of :func:`args_to_dict` (enum fields also accept ints)."""
    from suite.cuda.model import Interleave, L2Promotion, OobFill, Swizzle, TensorMapDataType

    def enum(kind: Any, value: Any) -> Any:
        return kind[value] if isinstance(value, str) else kind(value)

    return TensorMapArgs(
        dtype=enum(TensorMapDataType, data["dtype"]),
        rank=int(data["rank"]),
        global_address=int(data["global_address"]),
        global_dim=tuple(data["global_dim"]),
        global_strides=tuple(data["global_strides"]),
        box_dim=tuple(data["box_dim"]),
        element_strides=tuple(data["element_strides"]),
        interleave=enum(Interleave, data["interleave"]),
        swizzle=enum(Swizzle, data["swizzle"]),
        l2_promotion=enum(L2Promotion, data["l2_promotion"]),
        oob_fill=enum(OobFill, data["oob_fill"]),
    )


def driver_call(args: TensorMapArgs, *, null_empty_arrays: bool = False) -> DriverCall:
    """The exact values handed to ``cuTensorMapEncodeTiled`` for ``args`` (no GPU needed).

    Enums become their ``cuda.h`` ints; arrays are lists, passed as given (cuda-bindings does
    not check them against the rank: the driver reads ``rank`` entries, ``rank - 1`` strides).
    An empty array becomes a one-entry array (module docstring) unless ``null_empty_arrays``,
    when it is ``None`` (a NULL pointer).

    Raises ``ValueError`` for values cuda-bindings cannot pass (negative, or too large for
    ``cuuint64_t`` / ``cuuint32_t``).
    """
    dims = list(args.global_dim)
    strides = list(args.global_strides)
    box = list(args.box_dim)
    es = list(args.element_strides)
    for name, values, bound in (
        ("global_dim", dims, _U64),
        ("global_strides", strides, _U64),
        ("box_dim", box, _U32),
        ("element_strides", es, _U32),
        ("rank", [args.rank], _U32),
        ("global_address", [args.global_address], _U64),
    ):
        for value in values:
            if not 0 <= value < bound:
                raise ValueError(f"{name} value {value} does not fit the driver's type")

    def fill(values: list[int], one: int) -> list[int] | None:
        if values:
            return values
        return None if null_empty_arrays else [one]

    size_bytes = math.ceil((dims[0] if dims else 1) * element_size_bits(args.dtype) / 8)
    return {
        "dtype": int(args.dtype),
        "rank": args.rank,
        "address": args.global_address,
        "global_dim": fill(dims, 1),
        "global_strides": fill(strides, max(16, -(-size_bytes // 16) * 16)),
        "box_dim": fill(box, 1),
        "element_strides": fill(es, 1),
        "interleave": int(args.interleave),
        "swizzle": int(args.swizzle),
        "l2_promotion": int(args.l2_promotion),
        "oob_fill": int(args.oob_fill),
    }


# --------------------------------------------------------------------------------------------
# The calls. These three functions use nothing but cuda-bindings' ``driver`` module: their
# source is copied verbatim into the standalone scripts (suite.tma_differential.records).
# --------------------------------------------------------------------------------------------


def _result_name(driver, err):
    """The CUresult's name, e.g. CUDA_ERROR_INVALID_VALUE."""
    name = getattr(err, "name", None)
    if name:
        return str(name)
    try:
        return driver.CUresult(int(err)).name
    except ValueError:
        return f"CUresult({int(err)})"


def _init_context(driver):
    """cuInit(0) and make device 0's primary context current; return facts about it."""
    (err,) = driver.cuInit(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuInit(0) returned {_result_name(driver, err)}")
    err, device = driver.cuDeviceGet(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDeviceGet(0) returned {_result_name(driver, err)}")
    err, context = driver.cuDevicePrimaryCtxRetain(device)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDevicePrimaryCtxRetain returned {_result_name(driver, err)}")
    (err,) = driver.cuCtxSetCurrent(context)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuCtxSetCurrent returned {_result_name(driver, err)}")
    info: dict[str, object] = {}
    err, version = driver.cuDriverGetVersion()
    if err == driver.CUresult.CUDA_SUCCESS:
        info["driver_version"] = int(version)
    err, name = driver.cuDeviceGetName(256, device)
    if err == driver.CUresult.CUDA_SUCCESS:
        info["device"] = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
    return info


def _encode_raw(driver, call):
    """cuTensorMapEncodeTiled with the values of ``call`` (see driver_call); the result name."""

    def array(kind, values):
        return None if values is None else [kind(int(v)) for v in values]

    err, _tensor_map = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType(call["dtype"]),
        call["rank"],
        call["address"],
        array(driver.cuuint64_t, call["global_dim"]),
        array(driver.cuuint64_t, call["global_strides"]),
        array(driver.cuuint32_t, call["box_dim"]),
        array(driver.cuuint32_t, call["element_strides"]),
        driver.CUtensorMapInterleave(call["interleave"]),
        driver.CUtensorMapSwizzle(call["swizzle"]),
        driver.CUtensorMapL2promotion(call["l2_promotion"]),
        driver.CUtensorMapFloatOOBfill(call["oob_fill"]),
    )
    return _result_name(driver, err)


# --------------------------------------------------------------------------------------------
# In this process.
# --------------------------------------------------------------------------------------------


def _import_driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise DriverUnavailable(f"cuda-bindings is not importable ({exc})") from exc
    return driver


def bindings_version() -> str:
    """cuda-bindings' version, or "" when it is not installed."""
    try:
        from cuda.bindings import __version__
    except ImportError:
        return ""
    return str(__version__)


@functools.lru_cache(maxsize=1)
def _ready() -> tuple[Any, DriverInfo]:
    driver = _import_driver()
    try:
        info = _init_context(driver)
    except RuntimeError as exc:
        raise DriverUnavailable(str(exc)) from exc
    info["bindings_version"] = bindings_version()
    return driver, info


def driver_info() -> DriverInfo:
    """Driver version, device name and cuda-bindings version (initialises the driver)."""
    return _ready()[1].copy()


def encode_call(call: DriverCall) -> str:
    """Encode a :func:`driver_call` dict in this process; the CUresult name."""
    driver, _ = _ready()
    return _encode_raw(driver, call)


def encode_with_driver(args: TensorMapArgs, *, null_empty_arrays: bool = False) -> str:
    """Call the real ``cuTensorMapEncodeTiled`` for ``args``; return the ``CUresult`` name.

    ``"CUDA_SUCCESS"`` when the driver accepts the descriptor, else the error's name (usually
    ``"CUDA_ERROR_INVALID_VALUE"``). The first call runs ``cuInit(0)`` and makes device 0's
    primary context current. Raises :class:`DriverUnavailable` without cuda-bindings or a
    GPU, ``ValueError`` for values cuda-bindings cannot pass (see :func:`driver_call`).
    """
    return encode_call(driver_call(args, null_empty_arrays=null_empty_arrays))


# --------------------------------------------------------------------------------------------
# In a child process: a crash costs one descriptor.
# --------------------------------------------------------------------------------------------


def serve(stdin: Any = None, stdout: Any = None) -> int:
    """The child's loop: one JSON request per line in, one JSON answer per line out.

    First line out: ``{"ready": true, "info": {...}}`` or ``{"fatal": "..."}``. Requests:
    ``{"call": <driver_call dict>}`` -> ``{"result": "CUDA_..."}`` or ``{"error": "..."}``;
    ``{"alloc": nbytes}`` -> ``{"ptr": int}`` (cuMemAlloc; for a run whose synthetic
    addresses the driver refuses).
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout

    def send(obj: Mapping[str, Any]) -> None:
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()

    try:
        driver, info = _ready()
    except DriverUnavailable as exc:
        send({"fatal": str(exc)})
        return 3
    send({"ready": True, "info": info})
    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            if "call" in request:
                send({"result": _encode_raw(driver, request["call"])})
            elif "alloc" in request:
                err, ptr = driver.cuMemAlloc(int(request["alloc"]))
                if err != driver.CUresult.CUDA_SUCCESS:
                    send({"error": f"cuMemAlloc: {_result_name(driver, err)}"})
                else:
                    send({"ptr": int(ptr)})
            else:
                send({"error": f"unknown request {sorted(request)}"})
        except Exception as exc:  # report, keep serving
            send({"error": f"{type(exc).__name__}: {exc}"})
    return 0


class IsolatedDriver:
    """Encodes in a child process, restarting it when the driver crashes or hangs.

    ``encode(call)`` returns the CUresult name, or ``"CRASH:<signal>"`` / ``"HANG"`` for the
    descriptor that took the child down, or ``"ERROR:<message>"`` when cuda-bindings refused
    the values (nothing reached the driver). Use as a context manager.
    """

    def __init__(self, timeout_s: float = 30.0, start_timeout_s: float = 180.0) -> None:
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.info: DriverInfo = {}
        self.restarts = 0
        self.crashes = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""

    # -- process handling
    def start(self) -> DriverInfo:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        env["PYTHONUNBUFFERED"] = "1"
        self._proc = subprocess.Popen(
            child_argv(sys.executable, Role.CUDA_DRIVER),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=str(ROOT),
        )
        self._buffer = b""
        hello = self._read(self.start_timeout_s)
        if hello is None or "fatal" in hello or not hello.get("ready"):
            why = (hello or {}).get("fatal") or self._death()
            self.stop()
            raise DriverUnavailable(f"driver child did not start: {why}")
        self.info = hello.get("info", {}).copy()
        return self.info

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> IsolatedDriver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _death(self) -> str:
        proc = self._proc
        if proc is None:
            return "not started"
        code = proc.poll()
        if code is None:
            return "HANG"
        if code < 0:
            try:
                return f"CRASH:{signal.Signals(-code).name}"
            except ValueError:
                return f"CRASH:signal {-code}"
        return f"CRASH:exit {code}"

    def _read(self, timeout_s: float) -> Answer | None:
        """One JSON line from the child, or None if it died or said nothing in time."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        answer: Answer = json.loads(line)
        return answer

    def request(self, obj: Request) -> Answer:
        """Send one request; the answer, or ``{"lost": "CRASH:..."|"HANG"}`` (child restarted)."""
        if self._proc is None:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write((json.dumps(obj) + "\n").encode())
            proc.stdin.flush()
            answer = self._read(self.timeout_s)
        except (BrokenPipeError, OSError):
            answer = None
        if answer is not None:
            return answer
        lost = self._death()
        self.crashes += 1
        self.stop()
        self.restarts += 1
        self.start()
        return {"lost": lost}

    def encode(self, call: DriverCall) -> str:
        answer = self.request({"call": call})
        if "result" in answer:
            return str(answer["result"])
        if "lost" in answer:
            return str(answer["lost"])
        return f"ERROR:{answer.get('error')}"

    def alloc(self, nbytes: int) -> int:
        """A real device allocation in the child (kept until the child exits)."""
        answer = self.request({"alloc": int(nbytes)})
        if "ptr" not in answer:
            raise DriverUnavailable(f"cuMemAlloc({nbytes}) failed: {answer}")
        return int(answer["ptr"])


def main(argv: list[str]) -> int:
    """The ``cuda-driver`` child of :class:`IsolatedDriver`: :func:`serve` on stdin/stdout."""
    return serve()
