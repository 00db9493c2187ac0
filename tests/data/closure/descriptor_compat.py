"""A paged GEMM that supports every release with device-side tensor descriptors: 3.3 calls the
builtin ``tl._experimental_make_tensor_descriptor``, 3.4 on ``tl.make_tensor_descriptor``; the
library binds whichever the installed Triton has to a module name, and its kernel makes a
descriptor for each K step (a new base every iteration, as a paged KV cache does).

triton-lang/triton#10229: the software pipeliner cannot predicate the ``tensormap_create`` of a
descriptor made inside a pipelined ``tl.dot`` loop. The trigger makes it in the loop; the
nearest passing config makes it once, before the loop.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

# 3.4 renamed the experimental builtin; both take (base, shape, strides, block_shape).
make_descriptor = getattr(tl, "make_tensor_descriptor", None) or getattr(
    tl, "_experimental_make_tensor_descriptor", None
)
BLOCK_M = tl.constexpr(128)
BLOCK_N = tl.constexpr(128)
BLOCK_K = tl.constexpr(64)

REPRO = Reproducer(
    id="closure-descriptor-compat",
    title="paged GEMM: a descriptor made in a pipelined tl.dot loop, either release's builtin",
    family="closure",
    params=(
        Choice("PAGED", (False, True)),
        Choice("num_warps", (4,)),
        Choice("num_stages", (3,)),
    ),
    configs={
        "trigger": [{"PAGED": True, "num_warps": 4, "num_stages": 3}],
        "nearest-pass": [{"PAGED": False, "num_warps": 4, "num_stages": 3}],
    },
    targets=("sm_90",),
    requires=("triton>=3.3",),
)


@triton.jit
def paged_gemm(a_ptr, b_ptr, c_ptr, M, N, K, PAGED: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    rn = off_n + tl.arange(0, BLOCK_N)
    whole = make_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_desc = whole
        if PAGED:  # a new base every iteration: the page of this K step
            a_desc = make_descriptor(a_ptr + k, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
        a = a_desc.load([off_m, k])
        b = tl.load(b_ptr + (k + tl.arange(0, BLOCK_K))[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    rm = off_m + tl.arange(0, BLOCK_M)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    signature.update({"M": "i32", "N": "i32", "K": "i32"})
    return compile_kernel(paged_gemm, case, signature, {"PAGED": case["PAGED"]})
