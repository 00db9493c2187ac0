"""Hand-minimal kernel of grouped_gemm.py's failure (TritonGPUAssignLatencies, sm_100,
3.4.0-3.5.1): a descriptor K loop that prefetches the next tile by hand."""

import triton
import triton.language as tl


@triton.jit
def kernel(a, b, c, K):
    a_desc = tl.make_tensor_descriptor(a, [64, K], [K, 1], [64, 32])
    b_desc = tl.make_tensor_descriptor(b, [K, 64], [64, 1], [32, 64])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    x = a_desc.load([0, 0])
    for k in range(0, K, 32):
        y = x
        if k < K:
            y = a_desc.load([0, k])
        acc += tl.dot(x, b_desc.load([k, 0]))
        x = y
    tl.store(c + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc)


SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32"}
CONSTEXPRS = {}
TARGET = 100
OPTIONS = {"num_warps": 4, "num_stages": 2}
