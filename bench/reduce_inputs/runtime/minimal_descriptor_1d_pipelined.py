"""Hand-minimal kernel of fused_add_rmsnorm_sm90.py's failure (triton-lang/triton#10474, sm_90,
triton 3.6.0): a 1-D tensor descriptor made inside a pipelined ``tl.range`` loop, a small tile
loaded and stored through it, faults with ``misaligned address`` at launch.

The yardstick of bench/reduce_gpu.sh (``suite.reduce.tree.kernel_measure`` of the kernel
below), and a launch of its own there: ``python minimal_descriptor_1d_pipelined.py`` exits 1
when it faults, 0 when the copy is right.
"""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x, y, n):
    for o in tl.range(0, n, 16, num_stages=3):
        a = tl.make_tensor_descriptor(x, shape=[n], strides=[1], block_shape=[16])
        b = tl.make_tensor_descriptor(y, shape=[n], strides=[1], block_shape=[16])
        b.store([o], a.load([o]))


def main():
    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )
    x = torch.rand(2048, device="cuda", dtype=torch.float16) * 2 - 1
    y = torch.full_like(x, float("nan"))
    try:
        kernel[(1,)](x, y, x.numel())
        torch.cuda.synchronize()
    except Exception as exc:  # the fault surfaces at the launch or at the synchronize
        print(f"fault: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}")
        return 1
    right = torch.equal(y, x)
    print("copy right: the bug does not show" if right else "copy wrong")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
