"""Hand-minimal kernel of layernorm_residual.py's failure (triton-lang/triton#10901's
family, sm_100, 3.6.0-3.7.1): a row statistic from one warp-specialized loop used in a
second one."""

import triton
import triton.language as tl


@triton.jit
def kernel(x, w, y):
    t = tl.program_id(0) + tl.zeros([1], tl.int32)
    s = tl.full([1], 0.0, tl.float32)
    for o in tl.range(0, 4096, 1024, warp_specialize=True):
        s += tl.sum(tl.load(x + t[:, None] * 4096 + o + tl.arange(0, 1024)[None, :]), axis=1)
    for o in tl.range(0, 4096, 1024, warp_specialize=True):
        r = o + tl.arange(0, 1024)
        c = t[:, None] * 4096 + r[None, :]
        tl.store(y + c, tl.load(x + c) * s[:, None] * tl.load(w + r)[None, :])


SIGNATURE = {"x": "*fp32", "w": "*fp32", "y": "*fp32"}
CONSTEXPRS = {}
TARGET = 100
OPTIONS = {"num_warps": 4}
