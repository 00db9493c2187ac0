"""Two real faulting Triton launches for compute-sanitizer (bench/sanitizer_gpu.sh).

``python bench/sanitizer_kernels.py descriptor`` launches the 1-D descriptor copy made
inside a 3-stage ``tl.range`` (fp16, XBLOCK 8: ``misaligned address`` on an H100 with triton
3.6.0, docs/facts.md); ``oob`` stores one block past the end of its output. Outputs are
poisoned (NaN) and inputs random. Imports only triton and torch.
"""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def copy_1d(x_ptr, y_ptr, n, XBLOCK: tl.constexpr, STAGES: tl.constexpr):
    for start in tl.range(0, n, XBLOCK, num_stages=STAGES):
        src = tl.make_tensor_descriptor(x_ptr, [n], [1], [XBLOCK])
        dst = tl.make_tensor_descriptor(y_ptr, [n], [1], [XBLOCK])
        dst.store([start], src.load([start]))


@triton.jit
def store_past_end(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = n + tl.arange(0, BLOCK)  # one block past the last element, no mask
    tl.store(y_ptr + offsets, tl.load(x_ptr + tl.arange(0, BLOCK)))


def main(which: str, stages: int) -> None:
    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )
    n = 1 << 12
    x = torch.randn(n, device="cuda", dtype=torch.float16)
    y = torch.full_like(x, float("nan"))
    if which == "descriptor":
        copy_1d[(1,)](x, y, n, XBLOCK=8, STAGES=stages, num_warps=4)
    else:
        store_past_end[(1,)](x, y, n, BLOCK=64, num_warps=4)
    torch.cuda.synchronize()
    print("finished; output equals input:", bool(torch.equal(x, y)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
