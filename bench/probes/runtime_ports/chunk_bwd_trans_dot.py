"""fla-org/flash-linear-attention#640: tl.dot(tl.trans(ds), q) on a dot's result is wrong on Hopper.

    python bench/probes/runtime_ports/chunk_bwd_trans_dot.py

The dQ/dK pass of chunked linear attention: a loop over BV-wide value blocks accumulates
dS = dO V^T, dQ = dO H and dK = V dH; then dS (causal, cast to fp16/bf16) gives
dQ += dS K and dK += dS^T Q. The report (a Triton codegen bug seen from FLA, Hopper H20/H100
with Triton 3.4 up to 3.7.0, fixed in 3.7.1 by FLA's account): dK is wrong when the key
tile BK is 64 (head dim 100); BK=128 is right. The transposed operand comes from the
wgmma accumulator layout.
"""

from __future__ import annotations

import _harness
import triton
import triton.language as tl

HEADS, T, BT, V = 32, 256, 64, 128


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
    n_chunks = T // BT
    rows = i_t * BT + tl.arange(0, BT)
    ks = i_k * BK + tl.arange(0, BK)
    k_in = ks < K
    ds = tl.zeros((BT, BT), dtype=tl.float32)
    dq = tl.zeros((BT, BK), dtype=tl.float32)
    dk = tl.zeros((BT, BK), dtype=tl.float32)
    state = (i_h * n_chunks + i_t) * K * V
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


def _config(k, bk, warps=4, stages=3, bv=64, dtype="bf16"):
    return {"K": k, "BK": bk, "BV": bv, "num_warps": warps, "num_stages": stages, "dtype": dtype}


CONFIGS = [
    _config(100, 64),
    _config(100, 64, dtype="fp16"),
    _config(128, 64),
    _config(100, 64, warps=2),
    _config(100, 64, stages=1),
    _config(100, 32),
    _config(100, 128),
]


def label(config):
    return (
        f"k{config['K']}-bk{config['BK']}-bv{config['BV']}-w{config['num_warps']}"
        f"-s{config['num_stages']}-{config['dtype']}"
    )


def launch(config):
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[config["dtype"]]
    k_dim, n_chunks = config["K"], T // BT

    def fresh(*shape):
        return (torch.rand(shape, device=_harness.DEVICE) * 2 - 1).to(dtype)

    q, key = fresh(HEADS, T, k_dim), fresh(HEADS, T, k_dim)
    value, grad_out = fresh(HEADS, T, V), fresh(HEADS, T, V)
    h, dh = fresh(HEADS, n_chunks, V, k_dim), fresh(HEADS, n_chunks, V, k_dim)
    dq = torch.full((HEADS, T, k_dim), float("nan"), device=_harness.DEVICE)
    dk = torch.full((HEADS, T, k_dim), float("nan"), device=_harness.DEVICE)
    grid = (triton.cdiv(k_dim, config["BK"]), n_chunks, HEADS)
    chunk_bwd_dq_dk[grid](
        q,
        key,
        value,
        grad_out,
        h,
        dh,
        dq,
        dk,
        T=T,
        K=k_dim,
        V=V,
        BT=BT,
        BK=config["BK"],
        BV=config["BV"],
        num_warps=config["num_warps"],
        num_stages=config["num_stages"],
    )
    _harness.synchronize()
    want_dq, want_dk = _reference(q, key, value, grad_out, h, dh, dtype)
    tolerance = 3e-2 if config["dtype"] == "bf16" else 1e-2
    verdict = _harness.compare(dk, want_dk, atol=tolerance * 4, rtol=tolerance)
    if verdict != "ok":
        return "dk " + verdict
    verdict = _harness.compare(dq, want_dq, atol=tolerance * 4, rtol=tolerance)
    return verdict if verdict == "ok" else "dq " + verdict


def _reference(q, key, value, grad_out, h, dh, dtype):
    """The same computation per chunk in float32, dS rounded to the input dtype as the
    kernel rounds it."""
    import torch

    heads, t, k_dim = q.shape
    chunks = t // BT

    def by_chunk(x):
        return x.float().reshape(heads, chunks, BT, x.shape[-1])

    qc, kc, vc, doc = by_chunk(q), by_chunk(key), by_chunk(value), by_chunk(grad_out)
    ds = torch.tril(doc @ vc.transpose(-1, -2)).to(dtype).float()
    dq = doc @ h.float() + ds @ kc
    dk = vc @ dh.float() + ds.transpose(-1, -2) @ qc
    return dq.reshape(heads, t, k_dim), dk.reshape(heads, t, k_dim)


if __name__ == "__main__":
    raise SystemExit(_harness.main(CONFIGS, label, launch))
