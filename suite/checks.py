"""GPU-side helpers for reproducers' launch code: poison, fresh inputs, a fair comparison.

Never test on zeros: a kernel that writes nothing passes a check against a
zero-filled buffer. Outputs are filled with NaN before every launch, inputs
are fresh random values, and the reference is computed in float64 (float32
for very large problems) with a tolerance that fits the output dtype.
"""

from __future__ import annotations

import os
from typing import Any

from suite.api import WrongResult

# (absolute, relative) tolerance by output dtype name, for sums of K products.
TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (6e-2, 2e-2),
    "float32": (1e-4, 1e-4),
    "float8_e4m3fn": (1.5e-1, 1.5e-1),
}


def torch_dtype(name: str) -> Any:
    import torch

    return {
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp32": torch.float32,
        "fp8e4nv": torch.float8_e4m3fn,
    }[name]


def device() -> str:
    """Where launches run: ``cuda``, or ``cpu`` under Triton's interpreter
    (``TRITON_INTERPRET=1``, which launches kernels on torch CPU tensors)."""
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def ensure_allocator() -> None:
    """Device-side tensor descriptors need Triton's global scratch allocator set."""
    import torch

    from suite.judgement import set_allocator

    set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=device()))


def random_input(shape: tuple[int, ...], dtype: str, seed: int | None = None) -> Any:
    """Fresh values in [-1, 1), cast to ``dtype``; a new seed each call unless given."""
    import torch

    generator = torch.Generator(device=device())
    generator.manual_seed(seed if seed is not None else torch.seed())
    values = torch.rand(shape, device=device(), generator=generator, dtype=torch.float32)
    return (values * 2 - 1).to(torch_dtype(dtype))


def poisoned(shape: tuple[int, ...], dtype: Any) -> Any:
    """An output buffer no kernel has written: NaN, or the smallest integer for integers."""
    import torch

    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), device=device(), dtype=dtype)
    return torch.full(shape, torch.iinfo(dtype).min, device=device(), dtype=dtype)


def assert_close(actual: Any, expected: Any, what: str, scale: float = 1.0) -> None:
    """Raise :class:`WrongResult` unless ``actual`` matches ``expected`` within tolerance.

    ``scale`` widens the tolerance for long reductions (e.g. sqrt(K) for a GEMM).
    NaN anywhere in ``actual`` means the kernel left poisoned elements unwritten.
    """
    import torch

    name = str(actual.dtype).replace("torch.", "")
    atol, rtol = TOLERANCES.get(name, (1e-2, 1e-2))
    got = actual.double()
    want = expected.double()
    unwritten = int(torch.isnan(got).sum())
    if unwritten:
        raise WrongResult(f"{what}: {unwritten} of {got.numel()} elements left NaN (unwritten)")
    error = (got - want).abs()
    bound = atol * scale + rtol * want.abs()
    bad = int((error > bound).sum())
    if bad:
        worst = int(torch.argmax(error - bound))
        raise WrongResult(
            f"{what}: {bad} of {got.numel()} elements off; worst at flat index {worst}: "
            f"got {got.flatten()[worst].item():.6g}, want {want.flatten()[worst].item():.6g}"
        )


GEMM_SHAPES = ((512, 512, 512), (520, 1040, 1008))
"""A tile-aligned problem and a ragged one (not a multiple of any tile, still 16-byte strided)."""


def check_gemm(kernel: Any, case: Any, dtype: str, out_dtype: str) -> None:
    """Launch a ``(a, b, c, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)`` GEMM kernel and check it.

    ``c = a @ b`` with a row-major ``[M, K]`` and ``b`` row-major ``[K, N]``, against
    a float64 reference of the same (already rounded) inputs.
    """
    import math

    import triton

    ensure_allocator()
    block = (case["BLOCK_M"], case["BLOCK_N"], case["BLOCK_K"])
    for m, n, k in GEMM_SHAPES:
        a = random_input((m, k), dtype)
        b = random_input((k, n), dtype)
        c = poisoned((m, n), torch_dtype(out_dtype))
        grid = (triton.cdiv(m, block[0]), triton.cdiv(n, block[1]))
        kernel[grid](
            a,
            b,
            c,
            m,
            n,
            k,
            BLOCK_M=block[0],
            BLOCK_N=block[1],
            BLOCK_K=block[2],
            **case.options,
        )
        expected = a.double() @ b.double()
        assert_close(c, expected, f"C[{m}x{n}] (K={k})", scale=max(1.0, math.sqrt(k) / 10))
