"""Compile a ``@triton.jit`` kernel for a named target, with no GPU.

Reproducers call :func:`compile_kernel`; it states the kernel's specialization
the way ``kernel[grid](...)`` would and hides how each Triton release takes it,
then turns the compiled kernel into the engine's :class:`~suite.api.Compiled`.
Runs in the child only.

Which form a release takes, and which options it has, is probed from its API by
:mod:`suite.judgement` (``source_form``, ``ast_source``, ``compile_options``), the code
every ``repro.py`` carries.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from suite.api import Case, Compiled, Unsupported

_RESOURCE_LINE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_INTEGER_TYPE = re.compile(r"^[iu](8|16|32|64)$")
DIVISIBILITY = "tt.divisibility"
Attrs = Mapping[str, Sequence[tuple[str, int]]]


@dataclass(frozen=True)
class Specialization:
    """What the JIT would know about the arguments: ``tt.divisibility`` and ``== 1``.

    ``attrs`` maps an argument name to its ``(attribute, value)`` pairs;
    ``equal_to_1`` names integer arguments the JIT folds to the constant 1.
    """

    attrs: Mapping[str, tuple[tuple[str, int], ...]]
    equal_to_1: frozenset[str]


def specialization(
    signature: Mapping[str, str],
    divisible: Collection[str] | None = None,
    equal_to_1: Collection[str] = (),
    attrs: Attrs | None = None,
    arguments: Collection[str] | None = None,
) -> Specialization:
    """The JIT's view of ``signature``: by default every pointer and integer argument
    is divisible by 16 (a 16-byte-aligned tensor, a size that is a multiple of 16).

    ``divisible`` names exactly the arguments that are (``()``: none); ``attrs``
    gives an argument's attributes outright and wins over both. ``arguments``: every
    argument of the kernel, where the names may come from; by default the signature's.
    The JIT's own decisions name arguments that are not in the signature: an integer
    equal to 1 is folded into the constants (3.0-3.2) or made constexpr (3.3 on), and
    3.0/3.1 count constexprs and ``None`` among the arguments divisible by 16.
    """
    known = signature if arguments is None else arguments
    named = [*(divisible or ()), *equal_to_1, *(attrs or {})]
    unknown = [n for n in named if n not in known]
    if unknown:
        where = "the signature" if arguments is None else "the kernel's arguments"
        raise TypeError(f"specialization names argument(s) not in {where}: {unknown}")
    if divisible is None:
        divisible = [n for n, ty in signature.items() if _aligned_by_default(ty)]
    by_name: dict[str, tuple[tuple[str, int], ...]] = {
        n: ((DIVISIBILITY, 16),) for n in divisible if n not in equal_to_1
    }
    for name, pairs in (attrs or {}).items():
        by_name[name] = tuple((str(key), int(value)) for key, value in pairs)
    return Specialization({n: a for n, a in by_name.items() if a}, frozenset(equal_to_1))


def _aligned_by_default(type_name: str) -> bool:
    return type_name.startswith("*") or bool(_INTEGER_TYPE.match(type_name))


def compile_kernel(
    fn: Any,
    case: Case,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any],
    *,
    divisible: Collection[str] | None = None,
    equal_to_1: Collection[str] = (),
    attrs: Attrs | None = None,
) -> Compiled:
    """Run Triton's whole pipeline (ttir to cubin) for ``case.target``.

    ``signature`` maps every non-constexpr argument name to a Triton type
    string (``"*fp16"``, ``"i32"``); ``constexprs`` gives the compile-time
    values by name. ``divisible``, ``equal_to_1`` and ``attrs`` state the
    specialization (see :func:`specialization`); the default is what
    ``kernel[grid](...)`` gives aligned tensors and sizes divisible by 16.
    """
    import triton
    from triton.backends.compiler import GPUTarget

    from suite.judgement import compile_options

    spec = specialization(signature, divisible, equal_to_1, attrs, fn.arg_names)
    source = _ast_source(fn, dict(signature), dict(constexprs), spec)
    target = GPUTarget("cuda", case.target.arch, 32)
    return compiled_facts(
        triton.compile(source, target=target, options=compile_options(case.options))
    )


def compiled_facts(kernel: Any) -> Compiled:
    """What ``triton.compile`` returned, in the engine's terms: the shared memory and tensor
    memory it uses, its cubin and what the cubin says of registers and spills. A compile
    function may return either (a reproducer that runs without the suite returns Triton's)."""
    import triton

    metadata = kernel.metadata
    cubin = kernel.asm.get("cubin")
    extra: dict[str, object] = {"triton_version": triton.__version__}
    if cubin:
        extra.update(cubin_resources(cubin))
    return Compiled(
        shared_bytes=getattr(metadata, "shared", None),
        tmem_columns=getattr(metadata, "tmem_size", None),
        cubin=cubin,
        extra=extra,
    )


def _ast_source(
    fn: Any, signature: dict[str, str], constexprs: dict[str, object], spec: Specialization
) -> Any:
    """The release's ``ASTSource`` through :func:`suite.judgement.ast_source`, the form
    every ``repro.py`` carries. The JIT folds an integer equal to 1 into the constants
    (3.0-3.2) or makes it a constexpr (3.3 on): both are its ``tt.equal_to`` 1."""
    from suite.judgement import ast_source, source_form

    if source_form() != "constexprs":
        _only_divisibility(spec)
    ones, attrs = ast_attrs(spec)
    return ast_source(fn, signature, {**constexprs, **ones}, attrs)


def ast_attrs(spec: Specialization) -> tuple[dict[str, int], dict[str, list[list[Any]]]]:
    """``spec`` as :func:`suite.judgement.ast_source` takes it: the constexprs an integer
    equal to 1 adds, and the attributes by argument name (``tt.equal_to`` 1 for those)."""
    ones = {name: 1 for name in sorted(spec.equal_to_1)}
    attrs = {n: [list(pair) for pair in pairs] for n, pairs in spec.attrs.items()}
    attrs.update({n: [["tt.equal_to", 1]] for n in ones})
    return ones, attrs


def _only_divisibility(spec: Specialization) -> list[str]:
    """Releases before 3.3 can state ``tt.divisibility = 16`` and nothing else."""
    for name, pairs in spec.attrs.items():
        if any(pair != (DIVISIBILITY, 16) for pair in pairs):
            raise Unsupported(
                f"argument {name!r} attributes {list(pairs)}: this Triton release takes only "
                f"{DIVISIBILITY} = 16 (attrs by path need ASTSource(constexprs=...), 3.3 on)"
            )
    return list(spec.attrs)


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

    from suite.warm_kernel import add_one

    with tempfile.TemporaryDirectory(prefix="repro-warm-") as cache:
        previous = os.environ.get("TRITON_CACHE_DIR")
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            signature = {"x_ptr": "*fp32"}
            source = _ast_source(add_one, signature, {"BLOCK": 128}, specialization(signature))
            triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": 4})
        finally:
            if previous is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = previous
