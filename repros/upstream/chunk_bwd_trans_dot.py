"""tl.dot(tl.trans(ds), q) on the result of a dot loop gives a wrong dK on Hopper (BK=64).

fla-org/flash-linear-attention#640 (a Triton codegen bug seen from FLA; H20 and H100,
Triton 3.4 up to 3.7.0; FLA's PR 983 says 3.7.1 fixes it): the dQ/dK pass of chunked
linear attention (FLA's ``chunk_bwd_kernel_dqkwg``) accumulates dS = dO V^T, dQ = dO H
and dK = V dH over value blocks, then casts the causal dS to the input dtype and adds
dQ += dS K and dK += dS^T Q. With a key tile BK=64 (head dim 100) dK is wrong; BK=128 is
right. FLA's diagnosis: dS lives in the wgmma accumulator layout and ``tl.trans`` of it
feeds the next dot. Not filed on Triton's tracker as far as we found. The kernel compiles
for sm_90 with 3.6.0 and 3.9.0 without a GPU.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel

HEADS, T, BT, V = 32, 256, 64, 128


def _reference(q, key, value, grad_out, h, dh):
    heads, t, k_dim = q.shape
    chunks = t // BT

    def by_chunk(x):
        return x.reshape(heads, chunks, BT, x.shape[-1])

    qc, kc, vc, doc = by_chunk(q), by_chunk(key), by_chunk(value), by_chunk(grad_out)
    ds = (doc @ vc.transpose(-1, -2)).tril().to(q.dtype)
    dq = doc @ h + ds @ kc
    dk = vc @ dh + ds.transpose(-1, -2) @ qc
    return {"dq": dq.reshape(heads, t, k_dim), "dk": dk.reshape(heads, t, k_dim)}


def _config(k, bk, warps=4, stages=3, dtype="bf16"):
    return {"K": k, "BK": bk, "BV": 64, "num_warps": warps, "num_stages": stages, "dtype": dtype}


REPRO = Reproducer(
    id="upstream-fla640-chunk-bwd-trans-dot",
    title="Hopper: tl.dot(tl.trans(ds), q) after a dot loop gives a wrong dK (BK=64)",
    family="triton-mma",
    references=(
        "https://github.com/fla-org/flash-linear-attention/issues/640",
        "https://github.com/fla-org/flash-linear-attention/pull/983",
    ),
    params=(
        Choice("K", (64, 100, 128)),
        Choice("BK", (32, 64, 128)),
        Choice("BV", (32, 64)),
        Choice("num_warps", (2, 4, 8)),
        Choice("num_stages", (1, 2, 3)),
        Choice("dtype", ("fp16", "bf16")),
    ),
    configs={
        "trigger": [_config(100, 64), _config(100, 64, dtype="fp16")],
        "nearest-pass": [_config(100, 128)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="k{K}-bk{BK}-bv{BV}-w{num_warps}-s{num_stages}-{dtype}",
    oracles=(Reference(_reference),),
)


@triton.jit
def chunk_bwd_dq_dk(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    h_ptr,
    dh_ptr,
    dq_ptr,
    dk_ptr,
    T: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
):
    i_k = tl.program_id(0)
    i_t = tl.program_id(1)
    i_h = tl.program_id(2)
    rows = i_t * BT + tl.arange(0, BT)
    ks = i_k * BK + tl.arange(0, BK)
    k_in = ks < K
    ds = tl.zeros((BT, BT), dtype=tl.float32)
    dq = tl.zeros((BT, BK), dtype=tl.float32)
    dk = tl.zeros((BT, BK), dtype=tl.float32)
    state = (i_h * (T // BT) + i_t) * K * V
    for i_v in range(0, V // BV):
        vs = i_v * BV + tl.arange(0, BV)
        seq = i_h * T * V + rows[:, None] * V + vs[None, :]
        value = tl.load(v_ptr + seq)
        grad_out = tl.load(do_ptr + seq)
        hk = state + vs[:, None] * K + ks[None, :]
        h = tl.load(h_ptr + hk, mask=k_in[None, :], other=0.0)
        dh = tl.load(dh_ptr + hk, mask=k_in[None, :], other=0.0)
        ds += tl.dot(grad_out, tl.trans(value))
        dq += tl.dot(grad_out, h)
        dk += tl.dot(value, dh)
    qk = i_h * T * K + rows[:, None] * K + ks[None, :]
    q = tl.load(q_ptr + qk, mask=k_in[None, :], other=0.0)
    key = tl.load(k_ptr + qk, mask=k_in[None, :], other=0.0)
    causal = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]
    ds = tl.where(causal, ds, 0.0).to(key.dtype)
    dq += tl.dot(ds, key)
    dk += tl.dot(tl.trans(ds), q)
    tl.store(dq_ptr + qk, dq, mask=k_in[None, :])
    tl.store(dk_ptr + qk, dk, mask=k_in[None, :])


def _constexprs(case):
    return {"T": T, "K": case["K"], "V": V, "BT": BT, "BK": case["BK"], "BV": case["BV"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    names = ("q_ptr", "k_ptr", "v_ptr", "do_ptr", "h_ptr", "dh_ptr")
    signature = {name: element for name in names}
    signature.update({"dq_ptr": "*fp32", "dk_ptr": "*fp32"})
    return compile_kernel(chunk_bwd_dq_dk, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    dtype, k_dim, chunks = case["dtype"], case["K"], T // BT
    return {
        "q": random_input((HEADS, T, k_dim), dtype),
        "key": random_input((HEADS, T, k_dim), dtype),
        "value": random_input((HEADS, T, V), dtype),
        "grad_out": random_input((HEADS, T, V), dtype),
        "h": random_input((HEADS, chunks, V, k_dim), dtype),
        "dh": random_input((HEADS, chunks, V, k_dim), dtype),
    }


@REPRO.launch
def launch_case(case, q, key, value, grad_out, h, dh):
    import torch

    dq = poisoned(tuple(q.shape), torch.float32)
    dk = poisoned(tuple(q.shape), torch.float32)
    grid = (triton.cdiv(case["K"], case["BK"]), T // BT, HEADS)
    chunk_bwd_dq_dk[grid](
        q, key, value, grad_out, h, dh, dq, dk, **_constexprs(case), **case.options
    )
    return {"dq": dq, "dk": dk}
