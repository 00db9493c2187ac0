"""An autotuned, warp-specialized matmul for Blackwell, in the style of the autotuned
GEMMs of kernel libraries: ``triton.autotune`` over tile shapes and warp counts with an
``early_config_prune`` that drops configs whose tiles do not fit the problem,
``triton.heuristics`` for EVEN_K, descriptors for A and B, a warp-specialized K loop and
an optional fp32 output.

The library warms its cache ahead of time: for each problem shape it prunes the
autotuner's configs as the autotuner would, fills in the heuristics, and compiles every
remaining config for sm_100 on a ``multiprocessing.Pool`` (fork) so the first call does
not pay for it. Under Triton 3.4.0 the 2-warp config of the warp-specialized loop
crashes TritonGPUAllocateWarpGroups (triton-lang/triton#8005 made it a diagnostic in
3.5.0); the pool's worker raises, and the warm-up reports "some configs failed".

Usage: python autotuned_matmul.py
"""

import multiprocessing
import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


def prune_to_problem(configs, named_args, **kwargs):
    """Drop configs whose tiles are larger than the problem in any dimension."""
    M, N, K = named_args["M"], named_args["N"], named_args["K"]
    kept = [
        c
        for c in configs
        if c.kwargs["BLOCK_M"] <= M and c.kwargs["BLOCK_N"] <= N and c.kwargs["BLOCK_K"] <= K
    ]
    return kept or configs[:1]


CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=2, num_stages=2),
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
]


@triton.jit
def _store_tile(
    c_ptr,
    bias_ptr,
    acc,
    off_m,
    off_n,
    M,
    N,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    FP32_OUT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    rm = off_m + tl.arange(0, BLOCK_M)
    rn = off_n + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if ACTIVATION == "gelu":
        # tanh approximation, as the MLP blocks of transformer libraries fuse it
        inner = 0.7978845608 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    elif ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    if FP32_OUT:
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=mask)
    else:
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16), mask=mask)


@triton.autotune(
    configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": prune_to_problem}
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def ws_matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    FP32_OUT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [stride_am, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [stride_bn, 1], [BLOCK_N, BLOCK_K])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_end = K if EVEN_K else tl.cdiv(K, BLOCK_K) * BLOCK_K
    for k in tl.range(0, k_end, BLOCK_K, warp_specialize=True):
        a = a_desc.load([off_m, k])
        b = b_desc.load([off_n, k])
        acc = tl.dot(a, b.T, acc)
    _store_tile(
        c_ptr,
        bias_ptr,
        acc,
        off_m,
        off_n,
        M,
        N,
        stride_cm,
        BLOCK_M,
        BLOCK_N,
        FP32_OUT,
        HAS_BIAS,
        ACTIVATION,
    )


def configs_for(M, N, K):
    """The configs the autotuner would benchmark for this problem, heuristics filled in."""
    tuner = ws_matmul
    named = {"M": M, "N": N, "K": K}
    configs = tuner.configs
    if tuner.early_config_prune:
        configs = tuner.early_config_prune(configs, named)
    heuristics = tuner.fn  # the Heuristics wrapper around the JIT function
    chosen = []
    for config in configs:
        meta = {**named, **config.kwargs}
        filled = {name: rule(meta) for name, rule in heuristics.values.items()}
        chosen.append(({**config.kwargs, **filled}, config.num_warps, config.num_stages))
    return heuristics.fn, chosen


def warm(job):
    (M, N, K), (meta, warps, stages) = job
    kernel, _ = configs_for(M, N, K)
    a, b, c = Buffer("float16", (M, K)), Buffer("float16", (N, K)), Buffer("float16", (M, N))
    compile_like_launch(
        kernel,
        100,
        a,
        b,
        c,
        Buffer("float16", (N,)),
        M,
        N,
        K,
        a.stride(0),
        b.stride(0),
        c.stride(0),
        FP32_OUT=False,
        HAS_BIAS=False,
        ACTIVATION="",
        **meta,
        num_warps=warps,
        num_stages=stages,
    )
    return meta


def main() -> int:
    jobs = []
    for shape in [(512, 512, 512)]:
        _, chosen = configs_for(*shape)
        jobs += [(shape, config) for config in chosen]
    failed = 0
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = [pool.apply_async(warm, (job,)) for job in jobs]
        for result in results:
            try:
                result.get()
            except Exception:
                failed += 1
    print(f"warmed {len(jobs) - failed} of {len(jobs)} configs")
    if failed:
        print("some configs failed")
    return int(failed > 0)


if __name__ == "__main__":
    sys.exit(main())
