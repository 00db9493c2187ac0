#!/usr/bin/env python3
"""the kernel gives wrong results on sm_90: mismatch

Launches the kernel on an sm_90 GPU with fresh random inputs and NaN-poisoned outputs
and judges it (differential), up to 10 times. Needs triton and torch. Exit 1: the fault
or the wrong result shows (printed); exit 0: it does not. Expected: wrong-result:launch:differential:num_stages: mismatch
Seen with triton 3.6.0, config {'D': 128, 'BLOCK_N': 64, 'num_stages': 2, 'num_warps': 4, 'dtype': 'fp16', 'ORDER': 'sum-first', 'N': 1000}
"""

import os
import sys

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"  # the interpreter: CPU

def torch_dtype(name):
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]

def random_input(shape, dtype):
    return (torch.rand(shape, device=DEVICE) * 2 - 1).to(torch_dtype(dtype))

def poisoned(shape, dtype):  # NaN, or the smallest integer: what no kernel writes
    fill = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).min
    return torch.full(shape, fill, device=DEVICE, dtype=dtype)

class Case(dict):
    options = property(lambda self: {k: self[k] for k in ("num_warps", "num_stages") if k in self})

class Differential:
    def __init__(self, variant, label=""):
        self.variant, self.name = variant, "differential:" + (label or "+".join(sorted(variant)))

@triton.jit
def normal_equations(
    x_ptr,
    y_ptr,
    xty_ptr,
    colsum_ptr,
    N,
    D: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ORDER: tl.constexpr,
):
    cols = tl.arange(0, D)
    xty = tl.zeros((D, D), dtype=tl.float32)
    colsum = tl.zeros((D,), dtype=tl.float32)
    for start in range(0, tl.cdiv(N, BLOCK_N)):
        rows = start * BLOCK_N + tl.arange(0, BLOCK_N)
        inside = (rows < N)[:, None]
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=inside, other=0.0)
        y = tl.load(y_ptr + rows[:, None] * D + cols[None, :], mask=inside, other=0.0)
        if ORDER == "dot-first":
            xty += tl.dot(tl.trans(x), y)
            colsum += tl.sum(x.to(tl.float32), axis=0)
        else:
            colsum += tl.sum(x.to(tl.float32), axis=0)
            xty += tl.dot(tl.trans(x), y)
    tl.store(colsum_ptr + cols, colsum)
    tl.store(xty_ptr + cols[:, None] * D + cols[None, :], xty)


def _constexprs(case):
    return {"D": case["D"], "BLOCK_N": case["BLOCK_N"], "ORDER": case["ORDER"]}


def make_inputs(case):
    shape = (case["N"], case["D"])
    return {"x": random_input(shape, case["dtype"]), "y": random_input(shape, case["dtype"])}


def launch_case(case, x, y):
    import torch

    xty = poisoned((case["D"], case["D"]), torch.float32)
    colsum = poisoned((case["D"],), torch.float32)
    normal_equations[(1,)](x, y, xty, colsum, case["N"], **_constexprs(case), **case.options)
    return {"xty": xty, "colsum": colsum}


CONFIG = Case({'D': 128, 'BLOCK_N': 64, 'num_stages': 2, 'num_warps': 4, 'dtype': 'fp16', 'ORDER': 'sum-first', 'N': 1000})
ORACLES = (Differential({"num_stages": 1}),)


def outputs(out):
    return dict(out) if isinstance(out, dict) else dict(enumerate(out)) if isinstance(out, (tuple, list)) else {0: out}


def run(case, inputs):
    out = launch_case(case, **inputs)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    return outputs(out)


def differs(got, want, atol, rtol):
    got, want = got.double(), want.double()
    if nan := int((got.isnan() & ~want.isnan()).sum()):
        return f"nan: {nan} of {got.numel()} elements NaN"
    if inf := int((got.isinf() & want.isfinite()).sum()):
        return f"inf: {inf} of {got.numel()} elements infinite"
    bad = int(((got - want).abs() > atol + rtol * want.abs())[got.isfinite() & want.isfinite()].sum())
    return f"mismatch: {bad} of {got.numel()} elements differ" if bad else ""


def judge(oracle, out, inputs):
    tol = {torch.float16: 1e-2, torch.bfloat16: 6e-2, torch.float32: 1e-4}
    if isinstance(oracle, Differential) and any(CONFIG.get(k) != v for k, v in oracle.variant.items()):
        other = run(Case({**CONFIG, **oracle.variant}), inputs)
        found = [f"{k}: {d}" for k, v in out.items() if (d := differs(v, other[k], tol.get(v.dtype, 1e-2), tol.get(v.dtype, 1e-2)))]
        return found[0] if found else ""
    return ""


def main(attempts=10):  # a race need not show on every launch: fresh inputs each attempt
    for attempt in range(1, attempts + 1):
        inputs = make_inputs(CONFIG)
        try:
            out = run(CONFIG, inputs)
        except Exception as exc:  # a fault at the launch or at the synchronize after it
            line = (str(exc).strip().splitlines() or [""])[0]
            print(f"fault: {type(exc).__name__}: {line}\nsignature: runtime-error:launch:{type(exc).__name__}: {line}")
            return 1
        for oracle in ORACLES:
            if found := judge(oracle, out, inputs):
                print(f"wrong result ({oracle.name}), attempt {attempt} of {attempts}: {found}")
                print(f"signature: wrong-result:launch:{oracle.name}: {found.split(': ')[1]}")
                return 1
    print(f"no fault and no wrong result in {attempts} attempts: the bug does not show")
    return 0


if __name__ == "__main__":
    sys.exit(main())
