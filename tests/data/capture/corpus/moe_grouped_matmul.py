"""Mixture-of-experts routing and grouped matmul, in the style of fused-MoE kernels:
tokens are routed to their top-k experts (on the host here), sorted by expert and padded
to BLOCK_M, and one program multiplies a block of sorted tokens by its expert's weight,
walking K. The expert weights are read through a tensor descriptor built for each K
slice (the weight slab of an expert is addressed from its base, as the expert-parallel
loader lays it out), the routing weight is applied in the epilogue.

The build step compiles its variants in a ``concurrent.futures`` process pool started
with ``spawn``, each worker quiet (stderr to /dev/null). Under Triton 3.4.0-3.8.0 the
pipeliner cannot predicate the descriptor created inside the ``tl.dot`` loop
(triton-lang/triton#10229): "Fatal pipeliner error".

Usage: python moe_grouped_matmul.py
"""

import concurrent.futures
import multiprocessing
import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


def route(num_tokens, num_experts, top_k, block_m):
    """Host-side routing: token -> top_k experts, sorted by expert, padded to block_m."""
    assignments = [(t * 7 + j * 3) % num_experts for t in range(num_tokens) for j in range(top_k)]
    counts = [assignments.count(e) for e in range(num_experts)]
    padded = [-(-c // block_m) * block_m for c in counts]
    return sum(padded), [p // block_m for p in padded]


@triton.jit
def _expert_of_block(expert_ids_ptr, pid_m):
    return tl.load(expert_ids_ptr + pid_m)


@triton.jit
def fused_moe_kernel(
    a_ptr,
    w_ptr,
    c_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    bias_ptr,
    a_scale_ptr,
    w_scale_ptr,
    N,
    K,
    num_valid_tokens,
    stride_am,
    stride_we,
    stride_wn,
    stride_cm,
    stride_be,
    top_k: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    USE_FP8_W8A8: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_token_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    expert = _expert_of_block(expert_ids_ptr, pid_m)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(
            a_ptr + (offs_token[:, None] // top_k) * stride_am + (k + offs_k)[None, :],
            mask=token_mask[:, None] & ((k + offs_k)[None, :] < K),
            other=0.0,
        )
        # The expert's weight slab for this K slice, through a descriptor.
        w_desc = tl.make_tensor_descriptor(
            w_ptr + expert * stride_we + k, [N, K], [stride_wn, 1], [BLOCK_N, BLOCK_K]
        )
        w = w_desc.load([pid_n * BLOCK_N, 0])
        acc = tl.dot(a, w.T, acc)
    if USE_FP8_W8A8:
        # Per-tensor activation scale, per-expert weight scale.
        acc = acc * tl.load(a_scale_ptr) * tl.load(w_scale_ptr + expert)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + expert * stride_be + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias[None, :].to(tl.float32)
    if MUL_ROUTED_WEIGHT:
        weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0.0)
        acc = acc * weight[:, None]
    c_mask = token_mask[:, None] & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_token[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16), c_mask)


def quiet():
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)


def build(block_m):
    num_tokens, num_experts, top_k, hidden, inter = 512, 8, 2, 1024, 2048
    padded, _ = route(num_tokens, num_experts, top_k, block_m)
    a = Buffer("float16", (num_tokens, hidden))
    w = Buffer("float16", (num_experts, inter, hidden))
    c = Buffer("float16", (num_tokens * top_k, inter))
    kernel = compile_like_launch(
        fused_moe_kernel,
        90,
        a,
        w,
        c,
        Buffer("float32", (num_tokens * top_k,)),
        Buffer("int32", (padded,)),
        Buffer("int32", (padded // block_m,)),
        Buffer("float16", (num_experts, inter)),
        Buffer("float32", (1,)),
        Buffer("float32", (num_experts,)),
        inter,
        hidden,
        num_tokens * top_k,
        a.stride(0),
        w.stride(0),
        w.stride(1),
        c.stride(0),
        inter,
        top_k=top_k,
        BLOCK_M=block_m,
        BLOCK_N=64,
        BLOCK_K=64,
        MUL_ROUTED_WEIGHT=True,
        HAS_BIAS=False,
        USE_FP8_W8A8=False,
        num_warps=4,
        num_stages=3,
    )
    return kernel.metadata.shared


def main() -> int:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context, initializer=quiet) as pool:
        futures = {block_m: pool.submit(build, block_m) for block_m in (64,)}
        status = 0
        for block_m, future in futures.items():
            try:
                print(f"BLOCK_M={block_m}: {future.result()} bytes of shared memory")
            except Exception as exc:
                print(f"BLOCK_M={block_m}: build failed ({type(exc).__name__})")
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
