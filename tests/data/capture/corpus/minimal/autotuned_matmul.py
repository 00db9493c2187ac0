"""Hand-minimal kernel of autotuned_matmul.py's failure (triton-lang/triton#8005, sm_100,
3.4.0): a warp-specialized descriptor loop compiled with 2 warps."""

import triton
import triton.language as tl


@triton.jit
def kernel(a, b, c, K):
    a_desc = tl.make_tensor_descriptor(a, [64, K], [K, 1], [64, 32])
    b_desc = tl.make_tensor_descriptor(b, [64, K], [K, 1], [64, 32])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in tl.range(0, K, 32, warp_specialize=True):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([0, k]).T, acc)
    tl.store(c + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc)


SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32"}
CONSTEXPRS = {}
TARGET = 100
OPTIONS = {"num_warps": 2, "num_stages": 2}
