"""Four tl.dot in one program (a linear-attention chunk backward) fault on Hopper.

triton-lang/triton#10486 (H100, reported 2026-06, closed, "needs reproducer") and #11366
(H20, triton 3.7.1 fails, 3.5.1 passes; closed): a program that loads dO, V (C x DV), a
32-row slice of H and dH (BLOCK_D x DV) and K (C x BLOCK_D) and does four dots -
dA = dO V^T, dQ = dO H^T + dA K, dK = V dH^T - hits an illegal memory access (an invalid
__shared__ read by wgmma under compute-sanitizer) with BLOCK_D=32 and num_warps=4. In
#10486 it faults in about half of fresh processes and never inside a process that ran it
once; one launch per case here may need several runs to show it. Whether triton 3.6.0
faults is not reported; the kernel compiles for sm_90 with 3.6.0 and 3.9.0 without a GPU.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel

HEADS, C, D, DV = 1024, 64, 128, 128


def _reference(grad_out, value, state, grad_state, key):
    d_attn = (grad_out @ value.transpose(1, 2)).tril().to(key.dtype)
    dq = grad_out @ state.transpose(1, 2) + d_attn @ key
    return {"dq": dq, "dk": value @ grad_state.transpose(1, 2)}


def _config(block_d, warps, dtype="bf16"):
    return {"BLOCK_D": block_d, "num_warps": warps, "dtype": dtype}


REPRO = Reproducer(
    id="upstream-10486-chunk-bwd-multidot",
    title="Hopper: four tl.dot in one program (BLOCK_D=32, 4 warps) fault: illegal memory access",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/10486",
        "https://github.com/triton-lang/triton/issues/11366",
    ),
    params=(
        Choice("BLOCK_D", (16, 32, 64)),
        Choice("num_warps", (4, 8)),
        Choice("dtype", ("fp16", "bf16")),
    ),
    configs={
        "trigger": [_config(32, 4), _config(32, 4, "fp16")],
        "nearest-pass": [_config(32, 8), _config(64, 4)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="bd{BLOCK_D}-w{num_warps}-{dtype}",
    oracles=(Reference(_reference),),
)


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


def _constexprs(case):
    return {"HEADS": HEADS, "C": C, "D": D, "DV": DV, "BLOCK_D": case["BLOCK_D"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {name: element for name in ("do_ptr", "v_ptr", "h_ptr", "dh_ptr", "k_ptr")}
    signature.update({"dq_ptr": "*fp32", "dk_ptr": "*fp32"})
    return compile_kernel(chunk_bwd_dq_dk, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    dtype = case["dtype"]
    return {
        "grad_out": random_input((HEADS, C, DV), dtype),
        "value": random_input((HEADS, C, DV), dtype),
        "state": random_input((HEADS, D, DV), dtype),
        "grad_state": random_input((HEADS, D, DV), dtype),
        "key": random_input((HEADS, C, D), dtype),
    }


@REPRO.launch
def launch_case(case, grad_out, value, state, grad_state, key):
    import torch

    dq = poisoned((HEADS, C, D), torch.float32)
    dk = poisoned((HEADS, C, D), torch.float32)
    grid = (HEADS * (D // case["BLOCK_D"]),)
    chunk_bwd_dq_dk[grid](
        grad_out, value, state, grad_state, key, dq, dk, **_constexprs(case), **case.options
    )
    return {"dq": dq, "dk": dk}
