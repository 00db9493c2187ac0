"""triton-lang/triton#10486, #11366: four tl.dot in one program fault on Hopper (BLOCK_D=32, w4).

    python bench/probes/runtime_ports/chunk_bwd_multidot.py

The backward of one chunk of linear attention for a 32-wide slice of the key dimension:
dA = dO V^T (causal), dQ = dO H^T + dA K, dK = V dH^T. The issues report an illegal memory
access (compute-sanitizer: an invalid __shared__ read by wgmma) in some fresh processes with
BLOCK_D=32 and num_warps=4; so each config runs in three fresh processes.
"""

from __future__ import annotations

import _harness
import triton
import triton.language as tl

HEADS, C, D, DV = 1024, 64, 128, 128
TRIALS = 3


@triton.jit
def chunk_bwd_dq_dk(
    do_ptr,
    v_ptr,
    h_ptr,
    dh_ptr,
    k_ptr,
    dq_ptr,
    dk_ptr,
    HEADS: tl.constexpr,
    C: tl.constexpr,
    D: tl.constexpr,
    DV: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    head = tl.program_id(0) % HEADS
    d_tile = tl.program_id(0) // HEADS
    rows = tl.arange(0, C)
    cols_v = tl.arange(0, DV)
    cols_d = d_tile * BLOCK_D + tl.arange(0, BLOCK_D)
    grad_out = tl.load(do_ptr + head * C * DV + rows[:, None] * DV + cols_v[None, :])
    value = tl.load(v_ptr + head * C * DV + rows[:, None] * DV + cols_v[None, :])
    state = tl.load(h_ptr + head * D * DV + cols_d[:, None] * DV + cols_v[None, :])
    grad_state = tl.load(dh_ptr + head * D * DV + cols_d[:, None] * DV + cols_v[None, :])
    key = tl.load(k_ptr + head * C * D + rows[:, None] * D + cols_d[None, :])

    d_attn = tl.dot(grad_out, tl.trans(value))
    d_attn = tl.where(rows[:, None] >= rows[None, :], d_attn, 0.0)
    dq = tl.dot(grad_out, tl.trans(state))
    dq += tl.dot(d_attn.to(key.dtype), key)
    dk = tl.dot(value, tl.trans(grad_state))

    out = head * C * D + rows[:, None] * D + cols_d[None, :]
    tl.store(dq_ptr + out, dq)
    tl.store(dk_ptr + out, dk)


CONFIGS = [
    {"BLOCK_D": 32, "num_warps": 4, "dtype": "bf16"},
    {"BLOCK_D": 32, "num_warps": 4, "dtype": "fp16"},
    {"BLOCK_D": 32, "num_warps": 8, "dtype": "bf16"},
    {"BLOCK_D": 64, "num_warps": 4, "dtype": "bf16"},
]


def label(config):
    return f"bd{config['BLOCK_D']}-w{config['num_warps']}-{config['dtype']}"


def launch(config):
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[config["dtype"]]

    def fresh(*shape):
        return (torch.rand(shape, device=_harness.DEVICE) * 2 - 1).to(dtype)

    grad_out, value, key = fresh(HEADS, C, DV), fresh(HEADS, C, DV), fresh(HEADS, C, D)
    state, grad_state = fresh(HEADS, D, DV), fresh(HEADS, D, DV)
    dq = torch.full((HEADS, C, D), float("nan"), device=_harness.DEVICE)
    dk = torch.full((HEADS, C, D), float("nan"), device=_harness.DEVICE)
    grid = (HEADS * (D // config["BLOCK_D"]),)
    chunk_bwd_dq_dk[grid](
        grad_out,
        value,
        state,
        grad_state,
        key,
        dq,
        dk,
        HEADS=HEADS,
        C=C,
        D=D,
        DV=DV,
        BLOCK_D=config["BLOCK_D"],
        num_warps=config["num_warps"],
    )
    _harness.synchronize()
    g, v, h, dh, k = (t.float() for t in (grad_out, value, state, grad_state, key))
    d_attn = torch.tril(g @ v.transpose(1, 2)).to(dtype).float()
    want_dq = g @ h.transpose(1, 2) + d_attn @ k
    want_dk = v @ dh.transpose(1, 2)
    tolerance = 3e-2 if config["dtype"] == "bf16" else 1e-2
    verdict = _harness.compare(dq, want_dq, atol=tolerance * 4, rtol=tolerance)
    if verdict != "ok":
        return "dq " + verdict
    verdict = _harness.compare(dk, want_dk, atol=tolerance * 4, rtol=tolerance)
    return verdict if verdict == "ok" else "dk " + verdict


if __name__ == "__main__":
    raise SystemExit(_harness.main(CONFIGS, label, launch, trials=TRIALS))
