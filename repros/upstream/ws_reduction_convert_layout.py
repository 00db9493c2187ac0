"""A warp-specialized RMS-norm style reduction loop, no tl.dot (sm_100).

triton-lang/triton#10901 (B200, closed): with ``warp_specialize=True`` on the
loops of a per-token RMS norm, automatic warp specialization leaves a layout
conversion outside every partition ("'ttg.convert_layout' op does not have
expected attribute ttg.partition which is expected for ops whose parent has
partitions"); flipping the hint to False compiles. This port keeps the issue's
shape (a [1, BLOCK_H] row, a sum of squares, a second scaling loop). 3.4.0-3.5.1
compile it, 3.6.0 fails in NVWSInsertAref, 3.7.0/3.7.1 fail with #10901's
diagnostic in TritonGPURemoveLayoutConversions, 3.8.0 and 3.9.0 compile it.
No fix PR was identified: the 3.8.0 boundary is the matrix's, and #10901 was
filed on the day 3.8.0's release tracker opened, so this reduction may hold an
earlier bug with the same diagnostic. BLOCK_H equal to the whole row (one
iteration) compiles on every release: the nearest pass.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel

HIDDEN = 4096


def _config(block_h):
    return {"BLOCK_H": block_h, "num_warps": 4, "num_stages": 3, "WARP_SPECIALIZE": True}


REPRO = Reproducer(
    id="upstream-10901-ws-reduction-convert-layout",
    title="warp_specialize=True on an RMS-norm loop: convert_layout without ttg.partition",
    family="triton-warp-specialization",
    references=("https://github.com/triton-lang/triton/issues/10901",),
    params=(
        Pow2("BLOCK_H", 1024, HIDDEN),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("WARP_SPECIALIZE", (False, True)),
    ),
    configs={"trigger": [_config(1024)], "nearest-pass": [_config(HIDDEN)]},
    default_sets=("trigger",),
    targets=("sm_100",),
    requires=("triton.language.range(warp_specialize)",),
    label="h{BLOCK_H}-w{num_warps}-s{num_stages}-ws{WARP_SPECIALIZE}",
)


@triton.jit
def rms_norm(
    input_ptr,
    weight_ptr,
    result_ptr,
    row_stride,
    eps,
    BLOCK_H: tl.constexpr,
    HIDDEN: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    token = tl.program_id(0) + tl.zeros([1], tl.int32)
    sum_sq = tl.full([1], 0.0, tl.float32)
    for offset in tl.range(0, HIDDEN, BLOCK_H, warp_specialize=WARP_SPECIALIZE):
        cols = offset + tl.arange(0, BLOCK_H)
        x = tl.load(input_ptr + token[:, None] * row_stride + cols[None, :]).to(tl.float32)
        sum_sq += tl.sum(x * x, axis=1)
    scale = tl.rsqrt(sum_sq / HIDDEN + eps)
    for offset in tl.range(0, HIDDEN, BLOCK_H, warp_specialize=WARP_SPECIALIZE):
        cols = offset + tl.arange(0, BLOCK_H)
        x = tl.load(input_ptr + token[:, None] * row_stride + cols[None, :]).to(tl.float32)
        w = tl.load(weight_ptr + cols).to(tl.float32)
        y = x * scale[:, None] * w[None, :]
        tl.store(result_ptr + token[:, None] * row_stride + cols[None, :], y.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"input_ptr": "*fp16", "weight_ptr": "*fp16", "result_ptr": "*fp16"}
    signature.update({"row_stride": "i32", "eps": "fp32"})
    constexprs = {
        "BLOCK_H": case["BLOCK_H"],
        "HIDDEN": HIDDEN,
        "WARP_SPECIALIZE": case["WARP_SPECIALIZE"],
    }
    return compile_kernel(rms_norm, case, signature, constexprs)
