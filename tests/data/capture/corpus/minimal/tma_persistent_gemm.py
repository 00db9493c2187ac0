"""Hand-minimal kernel of tma_persistent_gemm.py's failure (triton-lang/triton#9728, sm_90,
3.4.0-3.9.0): pointer loads feeding a ``tl.dot`` in a warp-specialized loop, 4 warps."""

import triton
import triton.language as tl


@triton.jit
def kernel(a, b, c, K):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in tl.range(0, K, 64, warp_specialize=True):
        x = tl.load(a + r[:, None] * K + k + r[None, :])
        acc = tl.dot(x, tl.load(b + (k + r)[:, None] * 64 + r[None, :]), acc)
    tl.store(c + r[:, None] * 64 + r[None, :], acc)


SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32"}
CONSTEXPRS = {}
TARGET = 90
OPTIONS = {"num_warps": 4, "num_stages": 3}
