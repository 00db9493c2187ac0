"""The GPU side of ``repro gate``: ``python -m suite.gate.gpu_child SPEC.json``.

One child per target whose GPU is visible. It loads the reproducer module,
takes its ``@triton.jit`` GEMM kernel (launched as ``kernel[grid](a, b, c, M,
N, K, **meta)``, the contract of :func:`suite.checks.check_gemm`) and, for
each config it is given:

- checks correctness: NaN-poisoned outputs, fresh random inputs, several
  shapes (tile-aligned and ragged) against a float64 reference, tolerance by
  dtype (:func:`suite.checks.assert_close`), and the timed size itself;
- times it with ``triton.testing.do_bench`` (median; do_bench zeroes a
  256 MiB buffer before every timed call, which evicts the inputs from L2;
  checked in do_bench's source at start-up and reported), over several fresh
  input sets, together with cuBLAS (``torch.matmul``) on the same inputs.

``screen`` items (``repro gate --suggest``) are first timed once per size, in
priority order, until the spec's deadline; the best of them then join the
``final`` items for the full check and the timing over every input set.
Kernels are compiled ahead by a pool of spawned processes into the shared
``TRITON_CACHE_DIR`` so that the GPU never waits for the compiler.

Facts only, as JSON lines in the spec's events file, flushed as they happen
(a crash still leaves what came before and the item it hit, from its
``begin`` event). The parent (:mod:`suite.gate.gate`) judges. Standard library,
triton and torch only (and :mod:`suite.checks`, :mod:`suite.gate.events`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite.gate.events import (
    Begin,
    Budget,
    Check,
    ContextLost,
    Done,
    EventLog,
    Fatal,
    Finalists,
    Note,
    Screen,
    Start,
    Timed,
)

OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
CUBLAS = "cublas"


def load_module(source: dict[str, str]) -> Any:
    """The reproducer's module, by path or by name (no Reproducer machinery needed)."""
    if "module" in source:
        return importlib.import_module(source["module"])
    path = Path(source["path"]).resolve()
    name = "gate_" + "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def launch_kwargs(kernel: Any, config: dict[str, Any]) -> dict[str, Any]:
    """The config's constexprs (those the kernel takes) and Triton's launch options."""
    meta = {k: v for k, v in config.items() if k in kernel.arg_names}
    meta.update({k: config[k] for k in OPTION_KEYS if config.get(k) is not None})
    return meta


def dtypes(config: dict[str, Any], out_dtypes: dict[str, str]) -> tuple[str, str]:
    dtype = str(config.get("dtype", "fp16"))
    return dtype, out_dtypes.get(dtype, dtype)


WarmJob = tuple[dict[str, str], str, dict[str, Any], list[int], dict[str, str]]
COMPILE_ERRORS = ("PTXASError", "CompilationError", "CompileTimeAssertionFailure")


def warm(job: WarmJob) -> tuple[str | None, str]:
    """In a pool process: compile one config for one specialization into the shared cache.

    ``warmup`` compiles without launching; the tensors only carry dtypes and alignment
    (the specialization depends on the values of M, N, K and on pointer alignment).
    Returns the exception's type name and first line, or (None, "").
    """
    import torch

    from suite.checks import torch_dtype

    source, kernel_name, config, shape, out_dtypes = job
    try:
        kernel = getattr(load_module(source), kernel_name)
        dtype, out_dtype = dtypes(config, out_dtypes)
        small = torch.empty(64, device="cuda", dtype=torch_dtype(dtype))
        out = torch.empty(64, device="cuda", dtype=torch_dtype(out_dtype))
        m, n, k = shape
        kernel.warmup(small, small, out, m, n, k, grid=(1,), **launch_kwargs(kernel, config))
    except Exception as exc:
        return type(exc).__name__, (str(exc).strip().splitlines() or [""])[0]
    return None, ""


class Warmer:
    """Compiles ahead in spawned processes, so the GPU does not wait for the compiler.

    A ``ProcessPoolExecutor``: a worker that dies breaks the pool instead of hanging
    it; then, as on any trouble here, the launch simply compiles in this process.
    """

    def __init__(self, spec: dict[str, Any], jobs: int) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        self.spec = spec
        self.futures: dict[str, list[Any]] = {}
        self.executor: Any = None
        if jobs > 1:
            # Spawned, not forked: CUDA is initialized per process.
            self.executor = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"))

    def submit(self, key: str, config: dict[str, Any], shapes: list[list[int]]) -> None:
        if self.executor is None:
            return
        from suite.gate.gpu_child import warm as by_name  # picklable for the spawned workers

        out = self.spec.get("out_dtypes") or {}
        # One compile per specialization: Triton specializes M, N, K on divisibility by 16.
        distinct = {tuple(d % 16 == 0 for d in shape): shape for shape in shapes}
        shapes = list(distinct.values())
        try:
            self.futures.setdefault(key, []).extend(
                self.executor.submit(
                    by_name, (self.spec["source"], self.spec["kernel"], config, list(shape), out)
                )
                for shape in shapes
            )
        except Exception:
            self.close()

    def compile_error(self, key: str, timeout: float | None) -> str | None:
        """A compile error the pool saw for ``key`` (None: fine, or unknown)."""
        for future in self.futures.pop(key, []):
            try:
                kind, message = future.result(timeout=timeout)
            except Exception:
                return None
            if kind in COMPILE_ERRORS:
                return f"{kind}: {message}"
        return None

    def close(self) -> None:
        if self.executor is None:
            return
        executor, self.executor = self.executor, None
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()


def verify_flush() -> dict[str, Any]:
    """How do_bench keeps L2 cold, checked rather than assumed.

    Reads do_bench's source for a cache clear inside its timed loop, and compares the
    buffer it clears (``get_empty_cache_for_benchmark``) with the GPU's L2 size.
    """
    import torch
    import triton
    import triton.testing

    try:
        source = inspect.getsource(triton.testing.do_bench)
        start = source.find("for i in range(n_repeat)")
        loop = source[start:] if start >= 0 else ""
        buffer = triton.runtime.driver.active.get_empty_cache_for_benchmark()
        buffer_bytes = int(buffer.numel() * buffer.element_size())
        l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0))
    except Exception as exc:
        return {"verified": False, "how": f"could not check do_bench: {exc}"}
    clears = "clear_cache(" in loop or ".zero_()" in loop
    verified = bool(clears and l2 and buffer_bytes >= 2 * l2)
    if clears and l2:
        how = (
            "do_bench clears the cache before every timed call (a clear_cache/zero_ call in "
            f"its timed loop, read from its source): it zeroes a {buffer_bytes >> 20} MiB "
            f"buffer, {buffer_bytes / l2:.1f}x the {l2 >> 20} MiB L2, and only fn() is "
            "between the timing events"
        )
    else:
        how = "no cache clear found in do_bench's timed loop"
    return {
        "clear_in_timed_loop": clears,
        "buffer_bytes": buffer_bytes,
        "l2_bytes": l2,
        "verified": verified,
        "how": how,
    }


class Bench:
    """Inputs, references and launches for one GEMM kernel."""

    def __init__(self, spec: dict[str, Any], events: EventLog) -> None:
        import torch
        import triton
        import triton.testing

        from suite import checks

        self.torch = torch
        self.triton = triton
        self.checks = checks
        self.spec = spec
        self.events = events
        self.kernel = getattr(load_module(spec["source"]), spec["kernel"])
        self.out_dtypes: dict[str, str] = spec.get("out_dtypes") or {}
        self.do_bench = triton.testing.do_bench
        self.seed = int(spec.get("seed") or 0)

    def inputs(self, size: list[int], dtype: str, salt: int) -> tuple[Any, Any]:
        m, n, k = size
        seed = self.seed + salt
        a = self.checks.random_input((m, k), dtype, seed=seed)
        b = self.checks.random_input((k, n), dtype, seed=seed + 7919)
        return a, b

    def launcher(self, config: dict[str, Any], a: Any, b: Any, c: Any) -> Callable[[], None]:
        m, k = a.shape
        n = b.shape[1]
        grid = (self.triton.cdiv(m, config["BLOCK_M"]), self.triton.cdiv(n, config["BLOCK_N"]))
        kwargs = launch_kwargs(self.kernel, config)
        kernel = self.kernel

        def launch() -> None:
            kernel[grid](a, b, c, m, n, k, **kwargs)

        return launch

    def check_once(self, config: dict[str, Any], a: Any, b: Any, expected: Any, what: str) -> None:
        _, out_dtype = dtypes(config, self.out_dtypes)
        c = self.checks.poisoned(tuple(expected.shape), self.checks.torch_dtype(out_dtype))
        self.launcher(config, a, b, c)()
        self.torch.cuda.synchronize()
        k = a.shape[1]
        self.checks.assert_close(c, expected, what, scale=max(1.0, math.sqrt(k) / 10))

    def check_shapes(self, config: dict[str, Any]) -> None:
        dtype, _ = dtypes(config, self.out_dtypes)
        for index, (m, n, k) in enumerate(self.spec["check_shapes"]):
            a, b = self.inputs([m, n, k], dtype, 1000 + index)
            expected = a.double() @ b.double()
            self.check_once(config, a, b, expected, f"C[{m}x{n}] (K={k})")

    def median_ms(self, fn: Callable[[], None]) -> float:
        return float(
            self.do_bench(
                fn,
                warmup=self.spec.get("warmup_ms", 25),
                rep=self.spec.get("rep_ms", 100),
                return_mode="median",
            )
        )


def classify_exception(exc: BaseException) -> tuple[str, str]:
    name = type(exc).__name__
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    if name == "WrongResult":
        return "wrong-result", first
    if name == "OutOfResources":
        return "resource-limit", f"OutOfResources: {first}"
    if name in ("PTXASError", "CompilationError", "CompileTimeAssertionFailure"):
        return "compiler-error", f"{name}: {first}"
    return "runtime-error", f"{name}: {first}"


def context_alive() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
    except Exception:
        return False
    return True


def run(spec: dict[str, Any], events: EventLog) -> int:
    """The whole protocol; 0 when done, 3 when the CUDA context was lost (restart me)."""
    import torch
    import triton

    items: list[dict[str, Any]] = spec["items"]
    prior: dict[str, Any] = spec.get("prior") or {}
    screen = [
        i
        for i in items
        if i["kind"] in ("screen", "both") and prior.get(i["key"], {}).get("screen") is None
    ]
    final = [i for i in items if i["kind"] in ("final", "both")]
    sizes: list[list[int]] = spec["sizes"]
    shapes: list[list[int]] = [*spec["check_shapes"], *sizes]
    deadline = spec.get("deadline")

    warmer = Warmer(spec, int(spec.get("compile_jobs") or 1))
    for item in final:
        if not prior.get(item["key"], {}).get("checked"):
            warmer.submit(item["key"], item["config"], shapes)
    for item in screen:
        warmer.submit(item["key"], item["config"], sizes[:1])

    bench = Bench(spec, events)
    bench.checks.ensure_allocator()
    props = torch.cuda.get_device_properties(0)
    events.emit(
        Start(
            device=props.name,
            capability=[props.major, props.minor],
            torch=torch.__version__,
            triton=triton.__version__,
            flush=verify_flush(),
            seed=bench.seed,
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        )
    )

    def failed(key: str, stage: str, exc: BaseException, size: list[int] | None = None) -> bool:
        """Record a failure; False when the CUDA context is gone (the parent restarts us)."""
        outcome, message = classify_exception(exc)
        events.emit(
            Check(
                key=key,
                stage=stage,
                ok=False,
                outcome=outcome,
                message=message,
                size=size,
                traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[
                    -4000:
                ],
            )
        )
        if outcome != "wrong-result" and not context_alive():
            events.emit(ContextLost(key=key))
            return False
        return True

    def compile_failed(key: str, stage: str, wait: float = 600.0) -> bool:
        error = warmer.compile_error(key, timeout=wait)
        if error is not None:
            events.emit(
                Check(key=key, stage=stage, ok=False, outcome="compiler-error", message=error)
            )
        return error is not None

    # Screening (--suggest): one median per size, best-first order, until the deadline.
    screened: dict[str, float] = {
        k: float(v["screen"]) for k, v in prior.items() if v.get("screen") is not None
    }
    references: dict[int, tuple[Any, Any, Any]] = {}
    for position, item in enumerate(screen):
        if deadline is not None and time.time() > deadline:
            events.emit(Budget(screened=position, left=len(screen) - position))
            break
        key, config = item["key"], item["config"]
        wait = 600.0 if deadline is None else max(1.0, deadline - time.time())
        if compile_failed(key, "compile", wait):
            continue
        dtype, out_dtype = dtypes(config, bench.out_dtypes)
        events.emit(Begin(key=key, stage="screen"))
        logs = []
        try:
            for index, size in enumerate(sizes):
                if index not in references:
                    a, b = bench.inputs(size, dtype, 0)
                    references[index] = (a, b, a.double() @ b.double())
                a, b, expected = references[index]
                bench.check_once(config, a, b, expected, f"C[{size[0]}x{size[1]}]")
                out = bench.checks.torch_dtype(out_dtype)
                c = torch.empty((size[0], size[1]), device="cuda", dtype=out)
                ms = bench.median_ms(bench.launcher(config, a, b, c))
                events.emit(Screen(key=key, size=size, ms=ms))
                m, n, k = size
                logs.append(math.log(2 * m * n * k / (ms * 1e-3) / 1e12))
        except Exception as exc:
            if not failed(key, "screen", exc):
                return 3
            continue
        screened[key] = sum(logs) / len(logs)
    references.clear()
    torch.cuda.empty_cache()

    if screen or screened:
        by_key = {i["key"]: i for i in items}
        best = sorted(screened, key=lambda k: -screened[k])[: int(spec.get("finalists") or 0)]
        finalists = [by_key[k] for k in best if k in by_key and by_key[k] not in final]
        for item in finalists:
            warmer.submit(item["key"], item["config"], shapes)
        final += finalists
        events.emit(Finalists(keys=best))

    # Full correctness on the check shapes (ragged included), then timing.
    timed: list[dict[str, Any]] = []
    for item in final:
        key = item["key"]
        if prior.get(key, {}).get("checked"):
            timed.append(item)
            continue
        if compile_failed(key, "check"):
            continue
        events.emit(Begin(key=key, stage="check"))
        try:
            bench.check_shapes(item["config"])
        except Exception as exc:
            if not failed(key, "check", exc):
                return 3
            continue
        events.emit(Check(key=key, stage="check", ok=True, shapes=spec["check_shapes"]))
        timed.append(item)
    warmer.close()

    dtype = dtypes(final[0]["config"], bench.out_dtypes)[0] if final else "fp16"
    out_dtype = dtypes({"dtype": dtype}, bench.out_dtypes)[1]
    cublas = bool(spec.get("cublas", True)) and out_dtype == dtype and dtype != "fp8e4nv"
    if not cublas:
        events.emit(Note(text=f"no cuBLAS comparison for {dtype} -> {out_dtype}"))
    dropped: set[str] = set()
    for size in sizes:
        m, n, k = size
        for input_set in range(int(spec.get("input_sets", 3))):
            a, b = bench.inputs(size, dtype, 10 * (input_set + 1))
            expected = a.double() @ b.double() if input_set == 0 else None
            c = torch.empty((m, n), device="cuda", dtype=bench.checks.torch_dtype(out_dtype))
            for item in timed:
                key, config = item["key"], item["config"]
                if key in dropped:
                    continue
                events.emit(Begin(key=key, stage="time", size=size, input_set=input_set))
                try:
                    if expected is not None:
                        bench.check_once(config, a, b, expected, f"C[{m}x{n}] (K={k})")
                        events.emit(Check(key=key, stage="size", ok=True, size=size))
                    ms = bench.median_ms(bench.launcher(config, a, b, c))
                except Exception as exc:
                    dropped.add(key)
                    if not failed(key, "size", exc, size):
                        return 3
                    continue
                events.emit(Timed(key=key, size=size, input_set=input_set, ms=ms))
            if cublas:
                events.emit(Begin(key=CUBLAS, stage="time", size=size, input_set=input_set))
                out = torch.empty((m, n), device="cuda", dtype=a.dtype)

                def matmul(a: Any = a, b: Any = b, out: Any = out) -> None:
                    torch.matmul(a, b, out=out)

                ms = bench.median_ms(matmul)
                events.emit(Timed(key=CUBLAS, size=size, input_set=input_set, ms=ms))
            del a, b, c, expected
            torch.cuda.empty_cache()
    events.emit(Done())
    return 0


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    events = EventLog(spec["events"])
    try:
        return run(spec, events)
    except BaseException as exc:
        events.emit(
            Fatal(
                type=type(exc).__name__,
                message=str(exc)[:2000],
                traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[
                    -4000:
                ],
            )
        )
        return 1


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter teardown: a compile pool's threads or CUDA's exit hooks must not
    # turn a finished run into a hang (the supervisor kills what is left in the group).
    os._exit(code)
