"""Hand-minimal kernel of paged_kv_decode.py's failure (triton-lang/triton#10229, sm_100,
3.4.0-3.8.0): a descriptor made inside a ``tl.dot`` loop, one per page."""

import triton
import triton.language as tl


@triton.jit
def kernel(q, k, o, n):
    r = tl.arange(0, 16)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    x = tl.load(q + r[:, None] * 16 + r[None, :])
    for p in range(0, n):
        d = tl.make_tensor_descriptor(k + p * 256, [16, 16], [16, 1], [16, 16])
        acc = tl.dot(x, d.load([0, 0]), acc)
    tl.store(o + r[:, None] * 16 + r[None, :], acc)


SIGNATURE = {"q": "*fp16", "k": "*fp16", "o": "*fp32", "n": "i32"}
CONSTEXPRS = {}
TARGET = 100
OPTIONS = {"num_warps": 4, "num_stages": 2}
