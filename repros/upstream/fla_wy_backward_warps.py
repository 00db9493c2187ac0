"""The delta-rule WY backward kernel is wrong on Hopper with 4 warps and 64-row chunks.

fla-org/flash-linear-attention#984 (2026-06, closed by the workaround #988): FLA's
``prepare_wy_repr_bwd_kernel`` (``fla/ops/delta_rule/wy_fast.py``) gives wrong ``dk`` and
``dbeta`` on H100/H200 "with Triton >= 3.4" for chunks of BT=64 rows (``dk`` off by about
half its norm; ``dv`` right); 32-row chunks are right. Bisected per config on an H100 with
triton 3.7.1: every ``num_warps=4`` config (2, 3 or 4 stages) fails (an illegal memory access
there), every ``num_warps=2`` config is right; on a GB200 with 3.6.0, 4 warps are right. FLA
restricts the kernel to 2 warps on Hopper "until the upstream compiler issue is resolved": a
Triton bug that a kernel library worked around.

The kernel here is that backward step written again (one program per chunk and head; masked
pointer loads, as FLA's kernel reads since it left block pointers, which triton 3.9 removed):
with ``A`` the chunk's WY matrix (read transposed),
``dv = (A du) * beta``, ``dk = (A dw) * beta + dA^T (k * beta) + (dA k) * beta`` and
``dbeta`` the matching row sums, where ``dA = -tril(A tril(du (v*beta)^T + dw (k*beta)^T) A)``.
The first K loop stores ``dk`` and the second reloads it (the output buffer is NaN before the
launch). The oracle is a float64 reference of the same formulas, with the kernel's casts to
the input dtype. The report's test shape: T=64 (or 128, 256), 2 heads, K=V=32, bf16.

On an H100 with triton 3.6.0 (2026-11-27, docs/gpu-results.md) 64-row chunks with 4 warps and
K=V=32 are wrong (bf16 with 2 and 3 stages, T=128 and T=64; fp16); 2 warps, 32-row chunks, and
K=V=64 with 4 warps are right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

H = 2


def _config(bt, warps, stages=2, t=128, d=32, dtype="bf16"):
    return {"BT": bt, "num_warps": warps, "num_stages": stages, "T": t, "D": d, "dtype": dtype}


def _strict_lower(x):
    import torch

    rows = torch.arange(x.shape[-1], device=x.device)
    return torch.where(rows[:, None] > rows[None, :], x, torch.zeros_like(x))


def _wy_backward(k, v, beta, a, dw, du, bt):
    """dk, dv, dbeta of one WY step per chunk and head, as the kernel computes them."""
    import torch

    dk, dv, dbeta = torch.empty_like(k), torch.empty_like(v), torch.empty_like(beta)
    for h in range(k.shape[1]):
        for t0 in range(0, k.shape[0], bt):
            rows = slice(t0, t0 + bt)
            kc, vc, dwc, duc = k[rows, h], v[rows, h], dw[rows, h], du[rows, h]
            b = beta[rows, h][:, None]
            at = a[rows, h].transpose(0, 1)  # the kernel reads A transposed
            v_beta, k_beta = (vc * b).to(vc.dtype), (kc * b).to(kc.dtype)
            dv_beta, dk_beta = at @ duc, at @ dwc
            grad_a = duc @ v_beta.transpose(0, 1) + dwc @ k_beta.transpose(0, 1)
            grad_a = (_strict_lower(grad_a).to(at.dtype) @ at).to(at.dtype)
            grad_a = (-_strict_lower(at @ grad_a)).to(kc.dtype)
            inner = grad_a @ kc
            dv[rows, h] = dv_beta * b
            dk[rows, h] = (dk_beta * b).to(kc.dtype) + grad_a.transpose(0, 1) @ k_beta + inner * b
            dbeta[rows, h] = (dv_beta * vc).sum(1) + (dk_beta * kc).sum(1) + (inner * kc).sum(1)
    return {"dk": dk, "dv": dv, "dbeta": dbeta}


REPRO = Reproducer(
    id="upstream-fla984-wy-backward-warps",
    title="the delta-rule WY backward kernel is wrong on Hopper with 4 warps and 64-row chunks",
    family="triton-kernel-library",
    references=(
        "https://github.com/fla-org/flash-linear-attention/issues/984",
        "https://github.com/fla-org/flash-linear-attention/pull/988",
    ),
    params=(
        Choice("BT", (32, 64)),
        Choice("num_warps", (2, 4, 8)),
        Choice("num_stages", (1, 2, 3, 4)),
        Size("T", (64, 128, 256)),
        Choice("D", (32, 64)),
        Choice("dtype", ("bf16", "fp16")),
    ),
    configs={
        "trigger": [_config(64, 4), _config(64, 4, stages=3, t=64), _config(64, 4, dtype="fp16")],
        "nearest-pass": [_config(64, 2), _config(32, 4), _config(64, 4, d=64)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="bt{BT}-w{num_warps}-s{num_stages}-t{T}-d{D}-{dtype}",
    oracles=(
        Reference(
            lambda k, v, beta, a, dw, du, bt: _wy_backward(k, v, beta, a, dw, du, bt),
        ),
    ),
)


@triton.jit
def wy_backward(
    k,
    v,
    beta,
    A,
    dw,
    du,
    dk,
    dv,
    dbeta,
    T,
    H: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
):
    chunk, head = tl.program_id(0), tl.program_id(1)
    rows = chunk * BT + tl.arange(0, BT)  # this chunk's time steps
    cols = tl.arange(0, BT)
    in_t = rows < T
    b_beta = tl.load(beta + head + rows * H, mask=in_t, other=0.0)
    a_tile = A + head * BT + cols[:, None] + rows[None, :] * (H * BT)  # A read transposed
    b_a = tl.load(a_tile, mask=(cols[:, None] < BT) & in_t[None, :], other=0.0)

    grad_beta = tl.zeros([BT], dtype=tl.float32)
    grad_a = tl.zeros([BT, BT], dtype=tl.float32)
    for iv in range(tl.cdiv(V, BV)):
        ov = iv * BV + tl.arange(0, BV)
        in_v = in_t[:, None] & (ov[None, :] < V)
        offs = head * V + rows[:, None] * (H * V) + ov[None, :]
        b_v = tl.load(v + offs, mask=in_v, other=0.0)
        v_beta = (b_v * b_beta[:, None]).to(b_v.dtype)
        b_du = tl.load(du + offs, mask=in_v, other=0.0)
        grad_a += tl.dot(b_du, tl.trans(v_beta), allow_tf32=False)
        dv_beta = tl.dot(b_a, b_du, allow_tf32=False)
        grad_beta += tl.sum(dv_beta * b_v, 1)
        tl.store(dv + offs, (dv_beta * b_beta[:, None]).to(b_v.dtype), mask=in_v)

    for ik in range(tl.cdiv(K, BK)):
        ok = ik * BK + tl.arange(0, BK)
        in_k = in_t[:, None] & (ok[None, :] < K)
        offs = head * K + rows[:, None] * (H * K) + ok[None, :]
        b_k = tl.load(k + offs, mask=in_k, other=0.0)
        k_beta = (b_k * b_beta[:, None]).to(b_k.dtype)
        b_dw = tl.load(dw + offs, mask=in_k, other=0.0)
        grad_a += tl.dot(b_dw, tl.trans(k_beta), allow_tf32=False)
        dk_beta = tl.dot(b_a, b_dw, allow_tf32=False)
        grad_beta += tl.sum(dk_beta * b_k, 1)
        tl.store(dk + offs, (dk_beta * b_beta[:, None]).to(b_k.dtype), mask=in_k)

    below = cols[:, None] > cols[None, :]
    grad_a = tl.where(below, grad_a, 0)
    grad_a = tl.dot(grad_a.to(b_a.dtype), b_a)
    grad_a = tl.dot(b_a, grad_a.to(b_a.dtype))
    grad_a = tl.where(below, -grad_a, 0).to(k.dtype.element_ty)

    for ik in range(tl.cdiv(K, BK)):
        ok = ik * BK + tl.arange(0, BK)
        in_k = in_t[:, None] & (ok[None, :] < K)
        offs = head * K + rows[:, None] * (H * K) + ok[None, :]
        b_k = tl.load(k + offs, mask=in_k, other=0.0)
        b_dk = tl.load(dk + offs, mask=in_k, other=0.0).to(tl.float32)  # stored by the loop above
        k_beta = (b_k * b_beta[:, None]).to(b_k.dtype)
        inner = tl.dot(grad_a, b_k, allow_tf32=False)
        grad_beta += tl.sum(inner * b_k, 1)
        b_dk += tl.dot(tl.trans(grad_a), k_beta, allow_tf32=False)
        b_dk += inner * b_beta[:, None]
        tl.store(dk + offs, b_dk.to(b_k.dtype), mask=in_k)

    tl.store(dbeta + head + rows * H, grad_beta.to(b_beta.dtype), mask=in_t)


def _constexprs(case):
    block = min(case["D"], 64)
    return {"H": H, "K": case["D"], "V": case["D"], "BT": case["BT"], "BK": block, "BV": block}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    names = ("k", "v", "beta", "A", "dw", "du", "dk", "dv", "dbeta")
    signature = dict.fromkeys(names, element)
    signature["T"] = "i32"
    return compile_kernel(wy_backward, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    t, d, dtype = case["T"], case["D"], case["dtype"]
    return {
        "k": random_input((t, H, d), dtype),
        "v": random_input((t, H, d), dtype),
        "beta": random_input((t, H), dtype),
        "a": random_input((t, H, case["BT"]), dtype) * 0.125,
        "dw": random_input((t, H, d), dtype),
        "du": random_input((t, H, d), dtype),
        "bt": case["BT"],
    }


@REPRO.launch
def launch_case(case, k, v, beta, a, dw, du, bt):
    dtype = torch_dtype(case["dtype"])
    dk, dv, dbeta = poisoned(k.shape, dtype), poisoned(v.shape, dtype), poisoned(beta.shape, dtype)
    grid = (triton.cdiv(k.shape[0], bt), H)
    wy_backward[grid](
        k, v, beta, a, dw, du, dk, dv, dbeta, k.shape[0], **_constexprs(case), **case.options
    )
    return {"dk": dk, "dv": dv, "dbeta": dbeta}
