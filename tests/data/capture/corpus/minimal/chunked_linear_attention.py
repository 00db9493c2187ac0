"""Hand-minimal kernel of chunked_linear_attention.py's failure (triton-lang/triton#6087,
sm_120, 3.0.0-3.3.0): any ``tl.dot``."""

import triton
import triton.language as tl


@triton.jit
def kernel(a, c):
    r = tl.arange(0, 64)
    x = tl.load(a + r[:, None] * 64 + r[None, :])
    tl.store(c + r[:, None] * 64 + r[None, :], tl.dot(x, x))


SIGNATURE = {"a": "*fp16", "c": "*fp32"}
CONSTEXPRS = {}
TARGET = 120
OPTIONS = {"num_warps": 4}
