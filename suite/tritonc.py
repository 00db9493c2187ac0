"""Compile a ``@triton.jit`` kernel for a named target, with no GPU.

Reproducers call :func:`compile_kernel`; it hides the differences between
Triton releases (``constexprs=`` with name-keyed signatures from 3.3 on,
``constants=`` keyed by position before) and turns the compiled kernel into
the engine's :class:`~suite.api.Compiled`. Runs in the child only.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any

from suite.api import Case, Compiled

_RESOURCE_LINE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def compile_kernel(
    fn: Any, case: Case, signature: Mapping[str, str], constexprs: Mapping[str, Any]
) -> Compiled:
    """Run Triton's whole pipeline (ttir to cubin) for ``case.target``.

    ``signature`` maps every non-constexpr argument name to a Triton type
    string (``"*fp16"``, ``"i32"``); ``constexprs`` gives the compile-time
    values by name.
    """
    import triton
    from triton.backends.compiler import GPUTarget

    source = _ast_source(fn, dict(signature), dict(constexprs))
    target = GPUTarget("cuda", case.target.arch, 32)
    kernel = triton.compile(source, target=target, options=case.options)
    metadata = kernel.metadata
    cubin = kernel.asm.get("cubin")
    extra: dict[str, Any] = {"triton_version": triton.__version__}
    if cubin:
        extra.update(cubin_resources(cubin))
    return Compiled(
        shared_bytes=getattr(metadata, "shared", None),
        tmem_columns=getattr(metadata, "tmem_size", None),
        cubin=cubin,
        extra=extra,
    )


def _ast_source(fn: Any, signature: dict[str, str], constexprs: dict[str, Any]) -> Any:
    from triton.compiler import ASTSource

    accepted = inspect.signature(ASTSource.__init__).parameters
    if "constexprs" in accepted:
        full = {name: signature.get(name, "constexpr") for name in fn.arg_names}
        return ASTSource(fn, full, constexprs=constexprs)
    # Releases before 3.3 key the signature and the constants by argument position.
    positional = {i: signature[n] for i, n in enumerate(fn.arg_names) if n in signature}
    constants = {i: constexprs[n] for i, n in enumerate(fn.arg_names) if n in constexprs}
    return ASTSource(fn, positional, constants=constants)


def cubin_resources(cubin: bytes) -> dict[str, int]:
    """Registers, stack and local (spill) bytes per thread, read with ``cuobjdump``.

    Registers are only known to Triton once a kernel is loaded on a GPU; the
    cubin has them without one. Uses the cuobjdump that Triton bundles.
    """
    tool = _bundled_tool("cuobjdump")
    if tool is None:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as handle:
        handle.write(cubin)
        handle.flush()
        proc = subprocess.run(
            [tool, "--dump-resource-usage", handle.name],
            capture_output=True,
            text=True,
            check=False,
        )
    match = _RESOURCE_LINE.search(proc.stdout)
    if not match:
        return {}
    regs, stack, _shared, local = (int(g) for g in match.groups())
    return {"registers": regs, "stack_bytes": stack, "local_bytes": local}


def _bundled_tool(name: str) -> str | None:
    import triton

    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    return bundled if os.path.exists(bundled) else shutil.which(name)


def warm_up(arch: int) -> None:
    """Compile a trivial kernel for ``arch`` so that a process forked later skips the
    first-compile set-up (backend, LLVM target, ptxas version): about 1 s of every
    fresh process's first compile, against 0.2-0.5 s for the compile itself."""
    import triton
    from triton.backends.compiler import GPUTarget

    with tempfile.TemporaryDirectory(prefix="repro-warm-") as cache:
        previous = os.environ.get("TRITON_CACHE_DIR")
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            source = _ast_source(_warm_kernel(), {"x_ptr": "*fp32"}, {"BLOCK": 128})
            triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": 4})
        finally:
            if previous is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = previous


def _warm_kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(x_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1)

    return add_one
