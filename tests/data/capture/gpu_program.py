"""A real GPU program for `repro capture` on a GPU (bench/capture_gpu.sh): an autotuned
matmul launched through ``kernel[grid](...)`` and checked against torch, then a launch of
the same kernel, untuned, with tiles too large for shared memory: it compiles, and the
launch raises OutOfResources, which the program does not catch (exit 1).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        a = tl.load(
            a_ptr + rows[:, None] * stride_am + ks[None, :],
            mask=(rows[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + ks[:, None] * stride_bk + cols[None, :],
            mask=(ks[:, None] < K) & (cols[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(tl.float16), mask=mask)


tuned = triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=2),
    ],
    key=["M", "N", "K"],
)(matmul)


def run(kernel, a, b, **meta):
    m, k = a.shape
    n = b.shape[1]
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))  # noqa: E731
    kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), **meta)
    return c


torch.manual_seed(0)
a = torch.rand((1024, 512), device="cuda", dtype=torch.float16) * 2 - 1
b = torch.rand((512, 768), device="cuda", dtype=torch.float16) * 2 - 1
c = run(tuned, a, b)
error = (c.double() - a.double() @ b.double()).abs().max().item()
print(f"autotuned matmul: max abs error {error:.3g}, best config {tuned.best_config}")
print("launching 256x256x128 tiles, 4 stages")
run(matmul, a, b, BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, num_warps=8, num_stages=4)
torch.cuda.synchronize()
print("unreachable: the launch above raises OutOfResources")
