"""Hand-minimal kernel of attention_fwd.py's failure (triton-lang/triton#4418, sm_90,
3.0-3.2): a dot of zero tiles, scaled by a broadcast zero row, aborts LLVM."""

import triton
import triton.language as tl


@triton.jit
def kernel(o):
    p = tl.dot(tl.zeros([64, 64], tl.float16), tl.zeros([64, 64], tl.float16))
    p = tl.zeros([64], tl.float16)[:, None] * p + p
    tl.store(o + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], p)


SIGNATURE = {"o": "*fp16"}
CONSTEXPRS = {}
TARGET = 90
OPTIONS = {"num_warps": 8}
