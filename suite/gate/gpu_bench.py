"""What the gate's GPU child measures with: the reproducer's kernel, compiles ahead in a
pool, inputs and references, launches, ``do_bench`` medians, and the L2 flush check.

Runs inside the child (:mod:`suite.gate.gpu_child`), and ``warm`` inside its spawned
compile workers. Standard library, triton and torch only (and :mod:`suite.checks`,
:mod:`suite.gate.events`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.gate.events import FlushCheck, GpuSpec

OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


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


def launch_kwargs(kernel: Any, config: Config) -> Config:
    """The config's constexprs (those the kernel takes) and Triton's launch options."""
    meta = {k: v for k, v in config.items() if k in kernel.arg_names}
    meta.update({k: config[k] for k in OPTION_KEYS if config.get(k) is not None})
    return meta


def dtypes(config: Config, out_dtypes: dict[str, str]) -> tuple[str, str]:
    dtype = str(config.get("dtype", "fp16"))
    return dtype, out_dtypes.get(dtype, dtype)


WarmJob = tuple[dict[str, str], str, Config, list[int], dict[str, str]]
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

    def __init__(self, spec: GpuSpec) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        self.spec = spec
        self.futures: dict[str, list[Any]] = {}
        self.executor: Any = None
        if spec.compile_jobs > 1:
            # Spawned, not forked: CUDA is initialized per process.
            self.executor = ProcessPoolExecutor(spec.compile_jobs, mp_context=get_context("spawn"))

    def submit(self, key: str, config: Config, shapes: list[list[int]]) -> None:
        if self.executor is None:
            return
        spec = self.spec
        # One compile per specialization: Triton specializes M, N, K on divisibility by 16.
        distinct = {tuple(d % 16 == 0 for d in shape): shape for shape in shapes}
        shapes = list(distinct.values())
        try:
            self.futures.setdefault(key, []).extend(
                self.executor.submit(
                    warm, (spec.source, spec.kernel, config, list(shape), spec.out_dtypes)
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


def verify_flush() -> FlushCheck:
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

    def __init__(self, spec: GpuSpec) -> None:
        import torch
        import triton
        import triton.testing

        from suite import checks

        self.torch = torch
        self.triton = triton
        self.checks = checks
        self.spec = spec
        self.kernel = getattr(load_module(spec.source), spec.kernel)
        self.out_dtypes = spec.out_dtypes
        self.do_bench = triton.testing.do_bench
        self.seed = spec.seed

    def inputs(self, size: list[int], dtype: str, salt: int) -> tuple[Any, Any]:
        m, n, k = size
        seed = self.seed + salt
        a = self.checks.random_input((m, k), dtype, seed=seed)
        b = self.checks.random_input((k, n), dtype, seed=seed + 7919)
        return a, b

    def launcher(self, config: Config, a: Any, b: Any, c: Any) -> Callable[[], None]:
        m, k = a.shape
        n = b.shape[1]
        grid = (self.triton.cdiv(m, config["BLOCK_M"]), self.triton.cdiv(n, config["BLOCK_N"]))
        kwargs = launch_kwargs(self.kernel, config)
        kernel = self.kernel

        def launch() -> None:
            kernel[grid](a, b, c, m, n, k, **kwargs)

        return launch

    def check_once(self, config: Config, a: Any, b: Any, expected: Any, what: str) -> None:
        _, out_dtype = dtypes(config, self.out_dtypes)
        c = self.checks.poisoned(tuple(expected.shape), self.checks.torch_dtype(out_dtype))
        self.launcher(config, a, b, c)()
        self.torch.cuda.synchronize()
        k = a.shape[1]
        self.checks.assert_close(c, expected, what, scale=max(1.0, math.sqrt(k) / 10))

    def check_shapes(self, config: Config) -> None:
        dtype, _ = dtypes(config, self.out_dtypes)
        for index, (m, n, k) in enumerate(self.spec.check_shapes):
            a, b = self.inputs([m, n, k], dtype, 1000 + index)
            expected = a.double() @ b.double()
            self.check_once(config, a, b, expected, f"C[{m}x{n}] (K={k})")

    def median_ms(self, fn: Callable[[], None]) -> float:
        return float(
            self.do_bench(
                fn,
                warmup=self.spec.warmup_ms,
                rep=self.spec.rep_ms,
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
