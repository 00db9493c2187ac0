"""tl.dot of small tiles: MMA selection and the frontend's dot checks across releases.

Real upstream behaviour, used by the signature and bisection tests (each seen on the
PyPI releases, no GPU):

- fp8e4nv, BLOCK_K=16 on sm_90: 3.0.0/3.1.0 abort (SIGABRT, "unsupported shared memory
  layout for MMAv3", an LLVM UNREACHABLE); 3.3.0 and later refuse it in the frontend
  ("Input shapes should have M >= 16, N >= 16 and K >= 32", then "M >= 1, N >= 1 and
  K >= 32" from 3.5.0: the same assertion, its numbers changed).
- fp8e4nv, BLOCK_M=8, BLOCK_K=32 on sm_90: refused by 3.3.0-3.4.0 (M >= 16), compiles
  from 3.5.0.
- bf16 on sm_100: 3.0.0/3.1.0 abort (SIGABRT, assertion "computeCapability not
  supported" in AccelerateMatmul); compiles from 3.3.0.
- fp64 on sm_90: "Unsupported dtype fp64" (3.0.0/3.1.0), "Unsupported lhs dtype fp64"
  (3.3.0-3.4.0), compiles from 3.5.0: one frontend check whose message changed.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

DTYPES = {"fp8e4nv": tl.float8e4nv, "bf16": tl.bfloat16, "fp64": tl.float64}

REPRO = Reproducer(
    id="dot-mma-select",
    title="tl.dot of small tiles",
    family="test",
    params=(
        Choice("BLOCK_M", (8, 64)),
        Choice("BLOCK_K", (16, 32)),
        Choice("dtype", ("bf16", "fp8e4nv", "fp64")),
        Choice("num_warps", (4,)),
    ),
    configs={
        "trigger": [
            {"BLOCK_M": 64, "BLOCK_K": 16, "dtype": "fp8e4nv", "num_warps": 4},
            {"BLOCK_M": 64, "BLOCK_K": 32, "dtype": "fp64", "num_warps": 4},
        ],
    },
    targets=("sm_90", "sm_100"),
    label="{dtype}-{BLOCK_M}x64x{BLOCK_K}",
)


@triton.jit
def dot_kernel(
    a_ptr, b_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, DTYPE: tl.constexpr
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :]).to(DTYPE)
    b = tl.load(b_ptr + rk[:, None] * 64 + rn[None, :]).to(DTYPE)
    out = tl.float64 if tl.float64 == DTYPE else tl.float32
    c = tl.dot(a, b, out_dtype=out)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], c.to(tl.float32))


@REPRO.compile
def compile_case(case):
    return compile_kernel(
        dot_kernel,
        case,
        {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"},
        {"BLOCK_M": case["BLOCK_M"], "BLOCK_K": case["BLOCK_K"], "DTYPE": DTYPES[case["dtype"]]},
    )
