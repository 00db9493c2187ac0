"""A user's plain fp16 GEMM for sm_120 (an older release's bug: Triton's MMA selection).

Written for the report tests, in the style of repros/upstream/: triton 3.0.0-3.3.0 know no
MMA version for compute capability 12.0 and stop in ``TritonGPUAccelerateMatmul`` on the
assertion ``computeCapability not supported`` (3.0-3.2 abort the process, 3.3.0 raises);
3.3.1 compiles it (upstream #6087, fixed by #6131). The nearest config without ``tl.dot``
(an elementwise product) compiles everywhere the release's LLVM knows sm_120.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="user-gemm-sm120",
    title="plain fp16 tl.dot GEMM for sm_120",
    family="user",
    params=(Choice("BLOCK", (32, 64)), Choice("num_warps", (4,))),
    configs={"trigger": [{"BLOCK": 64, "num_warps": 4}]},
    targets=("sm_120",),
    label="{BLOCK}-w{num_warps}",
)


@triton.jit
def small_gemm(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs[:, None] * K + (k + offs)[None, :])
        b = tl.load(b_ptr + (k + offs)[:, None] * BLOCK + offs[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}
    return compile_kernel(small_gemm, case, signature, {"BLOCK": case["BLOCK"]})
