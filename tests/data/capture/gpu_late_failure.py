"""A real GPU program whose launch fails only later (bench/capture_gpu.sh, step 4): a copy
kernel that stores far past its output (an offset of 2**40 elements), launched through
``kernel[grid](...)``. The launch returns; the illegal address surfaces at the next
``torch.cuda.synchronize()``, which raises, and the program exits 1.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def shifted_copy(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    values = tl.load(x_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets + SHIFT, values, mask=inside)


def main() -> None:
    n = 1 << 16
    x = torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    shifted_copy[(triton.cdiv(n, 1024),)](x, out, n, SHIFT=1 << 40, BLOCK=1024)
    print("launched shifted_copy", flush=True)
    torch.cuda.synchronize()  # the illegal address is reported here
    print("not reached")


if __name__ == "__main__":
    main()
