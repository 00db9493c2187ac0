"""Kernels that Triton's own Python refuses, release by release (no GPU needed).

Each was seen on the PyPI releases; every refusal is raised while the frontend turns the
kernel into TTIR, before any MLIR pass runs:

- ``fp16-scaled``: ``tl.dot_scaled`` with an fp16 operand. 3.2.0 raises
  ``ValueError: Invalid float format: constexpr[fp16].`` (words that name no limit:
  unsupported); 3.3.1 and later compile it on sm_90.
- ``fp8-small-m``: an fp8 ``tl.dot`` of 8 rows on sm_90. 3.3.1 asserts ``Input shapes should
  have M >= 16, N >= 16 and K >= 32`` (a limit it names: ``user-error:triton-rejects``);
  3.5.0 and later compile it.
- ``num-ctas``: ``num_ctas=2`` for sm_80. 3.5.0 and later raise ``ValueError: num_ctas > 1
  requires NVIDIA SM90+ (Hopper)`` while parsing the options (``user-error:triton-rejects``).
  Before 3.5 nothing refuses it and ptxas rejects the PTX (#7811, a compiler bug, ported as
  ``upstream-7811-num-ctas-pre-hopper``): the case is unsupported there.
- ``ws-keyword``: ``tl.range(..., warp_specialize=True)``. Before 3.4 ``tl.range`` has no
  such keyword: ``TypeError: ... unexpected keyword argument 'warp_specialize'``
  (unsupported, the message kept).
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer, Unsupported
from suite.tritonc import compile_kernel

KINDS = ("fp16-scaled", "fp8-small-m", "num-ctas", "ws-keyword")
TARGETS = {
    "fp16-scaled": "sm_90",
    "fp8-small-m": "sm_90",
    "num-ctas": "sm_80",
    "ws-keyword": "sm_90",
}

REPRO = Reproducer(
    id="triton-refusals",
    title="Kernels Triton's frontend refuses on some releases",
    family="test",
    params=(Choice("kind", KINDS), Choice("num_ctas", (1, 2))),
    configs={"all": [{"kind": k, "num_ctas": 2 if k == "num-ctas" else 1} for k in KINDS]},
    targets=("sm_80", "sm_90"),
    label="{kind}",
)


@triton.jit
def fp16_scaled(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 64)
    rk = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 64 + r[None, :])
    b = tl.load(b_ptr + rk[:, None] * 64 + r[None, :])
    acc = tl.dot_scaled(a, None, "fp16", b, None, "e2m1")
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)


@triton.jit
def fp8_small_m(a_ptr, b_ptr, c_ptr):
    rm = tl.arange(0, 8)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, 32)
    a = tl.load(a_ptr + rm[:, None] * 32 + rk[None, :]).to(tl.float8e4nv)
    b = tl.load(b_ptr + rk[:, None] * 64 + rn[None, :]).to(tl.float8e4nv)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], tl.dot(a, b))


@triton.jit
def copy(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    tl.store(y_ptr + r, tl.load(x_ptr + r))


@triton.jit
def ws_loop(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    acc = tl.zeros((128,), dtype=tl.float32)
    for i in tl.range(0, 4, warp_specialize=True):
        acc += tl.load(x_ptr + i * 128 + r)
    tl.store(y_ptr + r, acc)


@REPRO.compile
def compile_case(case):
    kind = case["kind"]
    if case.target.name != TARGETS[kind]:
        raise Unsupported(f"{kind} is a case for {TARGETS[kind]}")
    if kind == "fp16-scaled":
        signature = {"a_ptr": "*fp16", "b_ptr": "*u8", "c_ptr": "*fp32"}
        return compile_kernel(fp16_scaled, case, signature, {})
    if kind == "fp8-small-m":
        signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
        return compile_kernel(fp8_small_m, case, signature, {})
    if kind == "num-ctas":
        if tuple(int(p) for p in triton.__version__.split(".")[:2]) < (3, 5):
            raise Unsupported("before 3.5 no check refuses num_ctas > 1 on sm_80 (#7811)")
        return compile_kernel(copy, case, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {})
    return compile_kernel(ws_loop, case, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {})
