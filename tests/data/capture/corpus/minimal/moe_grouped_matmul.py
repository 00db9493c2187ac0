"""Hand-minimal kernel of moe_grouped_matmul.py's failure (triton-lang/triton#10229, sm_90
and sm_100, 3.4.0-3.8.0): a descriptor made inside a ``tl.dot`` loop."""

import triton
import triton.language as tl


@triton.jit
def kernel(a, b, c, K):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in range(0, K, 64):
        d = tl.make_tensor_descriptor(a + k, [64, K], [K, 1], [64, 64])
        acc = tl.dot(d.load([0, 0]), tl.load(b + r[:, None] * 64 + r[None, :]), acc)
    tl.store(c + r[:, None] * 64 + r[None, :], acc)


SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32"}
CONSTEXPRS = {}
TARGET = 90
OPTIONS = {"num_warps": 4, "num_stages": 3}
