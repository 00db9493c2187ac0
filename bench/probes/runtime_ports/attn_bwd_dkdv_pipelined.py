"""triton-lang/triton#10573: an attention-backward dK/dV loop faults on an H100 with triton 3.6.0.

    python bench/probes/runtime_ports/attn_bwd_dkdv_pipelined.py

One program owns a BLOCK_N1 tile of keys and values and walks the queries BLOCK_M1 rows at
a time with four tl.dot per step (S^T = K Q^T, dV += P^T dO, dP^T = V dO^T, dK += dS^T Q).
The issue: BLOCK_M1=64, BLOCK_N1=128, head dim 32, num_stages=2, num_warps=4 gives "an
illegal memory access was encountered" over repeated launches (triton 3.6.0 and 3.7.0);
num_stages=1 runs. Each config here launches LAUNCHES times, poisoned before each.
"""

from __future__ import annotations

import _harness
import triton
import triton.language as tl

HEADS, CTX, HEAD_DIM = 16, 1024, 32
LAUNCHES = 20


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


def _config(m1, n1, stages, warps=4):
    return {"BLOCK_M1": m1, "BLOCK_N1": n1, "num_stages": stages, "num_warps": warps}


CONFIGS = [
    _config(64, 128, 2),
    _config(64, 128, 3),
    _config(64, 128, 1),
    _config(32, 128, 1),
    _config(32, 128, 2),
    _config(64, 64, 2),
]


def label(config):
    return (
        f"m{config['BLOCK_M1']}-n{config['BLOCK_N1']}-d{HEAD_DIM}"
        f"-s{config['num_stages']}-w{config['num_warps']}"
    )


def _reference(q, k, v, grad_out):
    """dK, dV of softmax attention in base 2 (no scale, no mask), and the kernel's inputs
    lse (log2-sum-exp2 per query) and delta (rowsum(P * dP))."""
    import torch

    q, k, v, grad_out = (t.double() for t in (q, k, v, grad_out))
    scores = q @ k.transpose(1, 2)
    lse = torch.logsumexp(scores * torch.log(torch.tensor(2.0)), dim=-1) / torch.log(
        torch.tensor(2.0)
    )
    p = torch.exp2(scores - lse[..., None])
    dp = grad_out @ v.transpose(1, 2)
    delta = (p * dp).sum(-1)
    ds = p * (dp - delta[..., None])
    return ds.transpose(1, 2) @ q, p.transpose(1, 2) @ grad_out, lse, delta


def _peak(tensor):
    return float(tensor.abs().max())


def launch(config):
    import torch

    def fresh():
        return (torch.rand(HEADS, CTX, HEAD_DIM, device=_harness.DEVICE) * 2 - 1).half()

    q, k, v, grad_out = fresh(), fresh(), fresh(), fresh()
    want_dk, want_dv, lse, delta = _reference(q, k, v, grad_out)
    lse, delta = lse.float().contiguous(), delta.float().contiguous()
    grid = (CTX // config["BLOCK_N1"], HEADS)
    for _ in range(LAUNCHES):
        dk = torch.full((HEADS, CTX, HEAD_DIM), float("nan"), device=_harness.DEVICE)
        dv = torch.full((HEADS, CTX, HEAD_DIM), float("nan"), device=_harness.DEVICE)
        attn_bwd_dkdv[grid](
            q,
            k,
            v,
            grad_out,
            lse,
            delta,
            dk,
            dv,
            CTX=CTX,
            HEAD_DIM=HEAD_DIM,
            BLOCK_M1=config["BLOCK_M1"],
            BLOCK_N1=config["BLOCK_N1"],
            num_stages=config["num_stages"],
            num_warps=config["num_warps"],
        )
        _harness.synchronize()
    # fp16 P^T and dS^T feed the dots: 1% of the largest value, and 1% of each.
    verdict = _harness.compare(dv, want_dv, atol=1e-2 * _peak(want_dv), rtol=1e-2)
    if verdict != "ok":
        return "dv " + verdict
    verdict = _harness.compare(dk, want_dk, atol=1e-2 * _peak(want_dk), rtol=1e-2)
    return verdict if verdict == "ok" else "dk " + verdict


if __name__ == "__main__":
    raise SystemExit(_harness.main(CONFIGS, label, launch))
