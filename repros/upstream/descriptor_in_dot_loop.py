"""A tensor descriptor made inside a pipelined tl.dot loop (sm_90, sm_100).

triton-lang/triton#10229: when ``tl.make_tensor_descriptor`` is called inside
a ``for`` loop whose ``tl.dot`` consumes the descriptor's load, the software
pipeliner has to predicate the ``ttng.tensormap_create`` it lowers to and does
not know how ("'ttng.tensormap_create' op pipeliner doesn't know how to
predicate this op", "LLVM ERROR: Fatal pipeliner error"). #10281 makes the
tensormap ops predicable (its merge date was not established). Every release
with ``make_tensor_descriptor`` up to 3.8.0 fails; 3.9.0 pipelines the loop,
predicating each ``tensormap_create`` of the prologue under an ``scf.if``. The same loop with
the descriptor made once, before the loop, compiles everywhere: the nearest
passing config. Releases before 3.4 have no ``make_tensor_descriptor``.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(inside):
    return {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "num_warps": 4,
        "num_stages": 3,
        "DESC_IN_LOOP": inside,
    }


REPRO = Reproducer(
    id="upstream-10229-descriptor-in-dot-loop",
    title="descriptor made in a pipelined tl.dot loop: tensormap_create cannot be predicated",
    family="triton-pipeliner",
    references=(
        "https://github.com/triton-lang/triton/issues/10229",
        "https://github.com/triton-lang/triton/pull/10281",
    ),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 64, 128),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("DESC_IN_LOOP", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_90", "sm_100"),
    requires=("triton.language.make_tensor_descriptor",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-inloop{DESC_IN_LOOP}",
)


@triton.jit
def descriptor_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    DESC_IN_LOOP: tl.constexpr,
):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    rn = off_n + tl.arange(0, BLOCK_N)
    hoisted = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if DESC_IN_LOOP:
            # A new base every iteration, as a paged KV cache does.
            a_desc = tl.make_tensor_descriptor(a_ptr + k, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
        else:
            a_desc = hoisted
        a = a_desc.load([off_m, k])
        b = tl.load(b_ptr + (k + tl.arange(0, BLOCK_K))[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    rm = off_m + tl.arange(0, BLOCK_M)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    signature.update({"M": "i32", "N": "i32", "K": "i32"})
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "DESC_IN_LOOP")
    return compile_kernel(descriptor_gemm, case, signature, {n: case[n] for n in names})
