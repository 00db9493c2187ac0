"""An attention-backward dK/dV loop pipelined with num_stages=2 faults on an H100.

triton-lang/triton#10573 (H100, triton 3.6.0 and 3.7.0, torch 2.11; closed, "needs
reproducer"): the dK/dV half of a flash-attention backward, one program per BLOCK_N1 keys
walking the queries BLOCK_M1 rows at a time with four tl.dot per step, raises "an illegal
memory access was encountered" with BLOCK_M1=64, BLOCK_N1=128, head dim 32, num_warps=4,
num_stages=2, more often over repeated launches; num_stages=1 (BLOCK_M1=32) runs. Each
launch here runs the kernel REPEAT times, poisoning the outputs before each, and returns
the last; the differential oracle compares it with the same kernel at num_stages=1. The
kernel compiles for sm_90 with 3.6.0 and 3.9.0 without a GPU.
"""

import math

import triton
import triton.language as tl

from suite import Choice, Differential, Reproducer
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel

HEADS, CTX, HEAD_DIM = 16, 1024, 32
REPEAT = 20


def _config(m1, n1, stages, warps=4):
    return {"BLOCK_M1": m1, "BLOCK_N1": n1, "num_stages": stages, "num_warps": warps}


REPRO = Reproducer(
    id="upstream-10573-attn-bwd-dkdv-pipelined",
    title="H100: a pipelined attention-backward dK/dV loop faults: illegal memory access",
    family="triton-pipeliner",
    references=("https://github.com/triton-lang/triton/issues/10573",),
    params=(
        Choice("BLOCK_M1", (32, 64)),
        Choice("BLOCK_N1", (64, 128)),
        Choice("num_stages", (1, 2, 3)),
        Choice("num_warps", (4, 8)),
    ),
    configs={
        "trigger": [_config(64, 128, 2)],
        "nearest-pass": [_config(64, 128, 1), _config(32, 128, 1)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="m{BLOCK_M1}-n{BLOCK_N1}-s{num_stages}-w{num_warps}",
    oracles=(Differential({"num_stages": 1}),),
)


@triton.jit
def attn_bwd_dkdv(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    dk_ptr,
    dv_ptr,
    CTX: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_M1: tl.constexpr,
    BLOCK_N1: tl.constexpr,
):
    start_n = tl.program_id(0) * BLOCK_N1
    base = tl.program_id(1) * CTX * HEAD_DIM
    cols = tl.arange(0, HEAD_DIM)
    keys = start_n + tl.arange(0, BLOCK_N1)
    k = tl.load(k_ptr + base + keys[:, None] * HEAD_DIM + cols[None, :])
    v = tl.load(v_ptr + base + keys[:, None] * HEAD_DIM + cols[None, :])
    dk = tl.zeros((BLOCK_N1, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N1, HEAD_DIM), dtype=tl.float32)
    for start_m in range(0, CTX, BLOCK_M1):
        queries = start_m + tl.arange(0, BLOCK_M1)
        q = tl.load(q_ptr + base + queries[:, None] * HEAD_DIM + cols[None, :])
        lse = tl.load(lse_ptr + tl.program_id(1) * CTX + queries)
        scores_t = tl.dot(k, tl.trans(q))
        p_t = tl.math.exp2(scores_t - lse[None, :])
        grad_out = tl.load(do_ptr + base + queries[:, None] * HEAD_DIM + cols[None, :])
        dv += tl.dot(p_t.to(grad_out.dtype), grad_out)
        delta = tl.load(delta_ptr + tl.program_id(1) * CTX + queries)
        dp_t = tl.dot(v, tl.trans(grad_out)).to(tl.float32)
        ds_t = p_t * (dp_t - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    out = base + keys[:, None] * HEAD_DIM + cols[None, :]
    tl.store(dk_ptr + out, dk)
    tl.store(dv_ptr + out, dv)


def _constexprs(case):
    blocks = {"BLOCK_M1": case["BLOCK_M1"], "BLOCK_N1": case["BLOCK_N1"]}
    return {"CTX": CTX, "HEAD_DIM": HEAD_DIM, **blocks}


@REPRO.compile
def compile_case(case):
    signature = {name: "*fp16" for name in ("q_ptr", "k_ptr", "v_ptr", "do_ptr")}
    signature.update({name: "*fp32" for name in ("lse_ptr", "delta_ptr", "dk_ptr", "dv_ptr")})
    return compile_kernel(attn_bwd_dkdv, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    """Q, K, V, dO, and the forward's saved statistics for them: lse (log2 of the sum of
    2^(q.k) per query) and delta (the row sums of P * dP)."""
    shape = (HEADS, CTX, HEAD_DIM)
    q, k, v, grad_out = (random_input(shape, "fp16") for _ in range(4))
    scores = q.double() @ k.double().transpose(1, 2)
    lse = (scores * math.log(2)).logsumexp(-1) / math.log(2)
    p = (scores - lse[..., None]).exp2()
    delta = (p * (grad_out.double() @ v.double().transpose(1, 2))).sum(-1)
    return {
        "q": q,
        "k": k,
        "v": v,
        "grad_out": grad_out,
        "lse": lse.float().contiguous(),
        "delta": delta.float().contiguous(),
    }


@REPRO.launch
def launch_case(case, q, k, v, grad_out, lse, delta):
    import torch

    grid = (CTX // case["BLOCK_N1"], HEADS)
    for _ in range(REPEAT):
        dk = poisoned((HEADS, CTX, HEAD_DIM), torch.float32)
        dv = poisoned((HEADS, CTX, HEAD_DIM), torch.float32)
        attn_bwd_dkdv[grid](
            q, k, v, grad_out, lse, delta, dk, dv, **_constexprs(case), **case.options
        )
    return {"dk": dk, "dv": dv}
