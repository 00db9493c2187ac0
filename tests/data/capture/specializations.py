"""Every specialization the JIT makes, compiled the way ``kernel[grid](...)`` would on the
installed release (through ``corpus/aot.py``, the JIT's own binder, no GPU): strides equal
to 1, sizes divisible by 16, ``do_not_specialize``, a constexpr default, a ``None``
argument, a helper of another module; on 3.4 and later a host ``TensorDescriptor``
argument and a device-side descriptor. tests/test_capture.py captures it with ``--all``
under every release 3.0.0-3.9.0 and runs each kernel's reproducer in isolation.

Usage: python specializations.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))

import epilogues
import triton
import triton.language as tl
from aot import Buffer, compile_like_launch


@triton.jit(do_not_specialize=["seed"])
def scale_rows(
    x_ptr,
    y_ptr,
    bias_ptr,
    n_cols,
    stride_xm,
    stride_xn,
    stride_ym,
    stride_yn,
    seed,
    BLOCK_N: tl.constexpr,
    ACTIVATION: tl.constexpr = "leaky_relu",
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0)
    x = x.to(tl.float32) * (seed + 1)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    x = epilogues.activation(x, ACTIVATION)
    tl.store(y_ptr + row * stride_ym + cols * stride_yn, x.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def descriptor_copy(in_desc, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    out_desc = tl.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    out_desc.store([off_m, off_n], in_desc.load([off_m, off_n]))


def main() -> int:
    x = Buffer("float16", (64, 96))
    y = Buffer("float16", (64, 96))
    compile_like_launch(
        scale_rows, 90, x, y, None, 96, *x.stride(), *y.stride(), 1, BLOCK_N=128, num_warps=2
    )
    print("compiled scale_rows")
    if hasattr(tl, "make_tensor_descriptor"):  # 3.4 on
        from triton.tools.tensor_descriptor import TensorDescriptor

        source = Buffer("float16", (128, 128))
        descriptor = TensorDescriptor(source, [128, 128], [128, 1], [64, 64])
        compile_like_launch(
            descriptor_copy,
            90,
            descriptor,
            Buffer("float16", (128, 128)),
            128,
            128,
            BLOCK_M=64,
            BLOCK_N=64,
        )
        print("compiled descriptor_copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
