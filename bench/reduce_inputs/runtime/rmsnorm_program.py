"""A user's program around the fused residual-add + RMSNorm kernel of
fused_add_rmsnorm_sm90.py (its library module here): a small pre-norm model whose layers
each launch the kernel through a ``torch.nn.Module`` wrapper, run for a few steps. On sm_90
with triton 3.6.0 the kernel's small tiles (XBLOCK=16, 3 stages) hit triton-lang/triton#10474
and the first synchronize raises ``CUDA error: misaligned address``: the program dies with
it, as a training script would. Input of bench/capture_reduce_gpu.sh (`repro capture` of it,
then `repro report` and `repro reduce` of what capture finds).

    python rmsnorm_program.py [--xblock 16] [--stages 3] [--steps 3]
"""

import argparse
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).parent))
from fused_add_rmsnorm_sm90 import ACT_SILU, fused_add_rmsnorm_kernel  # noqa: E402


def _scratch(size, align, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


class FusedAddRMSNorm(torch.nn.Module):
    """``norm(x + residual)`` with SiLU and an output scale; returns (out, x + residual)."""

    def __init__(self, hidden, xblock, stages, eps=1e-6, scale=0.5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden, dtype=torch.float16, device="cuda"))
        self.bias = torch.nn.Parameter(torch.zeros(hidden, dtype=torch.float16, device="cuda"))
        self.xblock, self.stages, self.eps, self.scale = xblock, stages, eps, scale

    def forward(self, x, residual):
        rows, cols = x.shape
        out, hidden = torch.empty_like(x), torch.empty_like(x)
        stats = torch.empty((3, rows), dtype=torch.float32, device=x.device)
        fused_add_rmsnorm_kernel[(rows,)](
            x, residual, self.weight, self.bias, out, hidden, stats[0], stats[1], stats[2],
            rows, cols, x.stride(0), 1.0, 0.0, 0, self.eps, self.scale, 60000.0,
            XBLOCK=self.xblock, STAGES=self.stages, ACTIVATION=ACT_SILU, IS_RMS_NORM=True,
            HAS_RESIDUAL=True, HAS_DROPOUT=False, HAS_BIAS=True, ZERO_CENTERED_WEIGHT=False,
            STORE_HIDDEN=True, STORE_STATS=True, STORE_AMAX=True, CLAMP_OUTPUT=True,
            num_warps=4,
        )  # fmt: skip
        return out, hidden


class Block(torch.nn.Module):
    def __init__(self, hidden, xblock, stages):
        super().__init__()
        self.norm = FusedAddRMSNorm(hidden, xblock, stages)
        self.proj = torch.nn.Linear(hidden, hidden, dtype=torch.float16, device="cuda")

    def forward(self, x, residual):
        normed, residual = self.norm(x, residual)
        return self.proj(normed), residual


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--xblock", type=int, default=16)
    parser.add_argument("--stages", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=2048)
    args = parser.parse_args()
    triton.set_allocator(_scratch)
    torch.manual_seed(0)
    blocks = [Block(args.hidden, args.xblock, args.stages) for _ in range(2)]
    with torch.no_grad():
        for step in range(args.steps):
            x = torch.randn(8, args.hidden, dtype=torch.float16, device="cuda")
            residual = torch.zeros_like(x)
            for block in blocks:
                x, residual = block(x, residual)
            torch.cuda.synchronize()
            print(f"step {step}: |x| = {x.float().norm():.3f}", flush=True)


if __name__ == "__main__":
    main()
