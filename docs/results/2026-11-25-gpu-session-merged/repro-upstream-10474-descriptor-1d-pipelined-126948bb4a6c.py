#!/usr/bin/env python3
"""the kernel fails at launch on sm_90: CUDA error: misaligned address

Launches the kernel on an sm_90 GPU with fresh random inputs and NaN-poisoned outputs
and judges it (reference), up to 10 times. Needs triton and torch. Exit 1: the fault
or the wrong result shows (printed); exit 0: it does not. Expected: runtime-error:launch:AcceleratorError: CUDA error: misaligned address
Seen with triton 3.6.0, config {'XBLOCK': 8, 'STAGES': 3, 'dtype': 'fp16', 'OP': 'copy', 'N': 17}
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

def ensure_allocator():  # device-side tensor descriptors need a global scratch allocator
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=DEVICE))

class Case(dict):
    options = property(lambda self: {k: self[k] for k in ("num_warps", "num_stages") if k in self})

class Reference:
    def __init__(self, compute, multiplier=3.0):
        self.compute, self.multiplier, self.name = compute, multiplier, "reference"

RSPLIT = 1024


@triton.jit
def scaled_residual(
    x_ptr,
    r_ptr,
    y_ptr,
    xnumel,
    alpha,
    XBLOCK: tl.constexpr,
    RSPLIT: tl.constexpr,
    STAGES: tl.constexpr,
    OP: tl.constexpr,
):
    start = tl.program_id(0) * RSPLIT
    length = min(RSPLIT, xnumel - start)
    offset = start
    for _ in tl.range(0, length, XBLOCK, num_stages=STAGES):
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK])
        y_desc = tl.make_tensor_descriptor(y_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK])
        x = x_desc.load([offset])
        if OP == "axpy":
            r_desc = tl.make_tensor_descriptor(
                r_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK]
            )
            y = x.to(tl.float32) * alpha + r_desc.load([offset]).to(tl.float32)
            y_desc.store([offset], y.to(x.dtype))
        else:
            y_desc.store([offset], x)
        offset += XBLOCK


def _constexprs(case):
    return {"XBLOCK": case["XBLOCK"], "RSPLIT": RSPLIT, "STAGES": case["STAGES"], "OP": case["OP"]}


def make_inputs(case):
    n = case["N"]
    alpha = 1.0 if case["OP"] == "copy" else 0.5
    residual = random_input((n,), case["dtype"]) * (0 if case["OP"] == "copy" else 1)
    return {"x": random_input((n,), case["dtype"]), "residual": residual, "alpha": alpha}


def launch_case(case, x, residual, alpha):
    ensure_allocator()
    y = poisoned(x.shape, torch_dtype(case["dtype"]))
    grid = (triton.cdiv(x.numel(), RSPLIT),)
    scaled_residual[grid](x, residual, y, x.numel(), alpha, **_constexprs(case))
    return y


CONFIG = Case({'XBLOCK': 8, 'STAGES': 3, 'dtype': 'fp16', 'OP': 'copy', 'N': 17})
ORACLES = (Reference(lambda x, residual, alpha: x * alpha + residual),)


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
    if isinstance(oracle, Reference):  # float64 reference; error relative to the input precision's
        wide = {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inputs.items()}
        precise, narrow = outputs(oracle.compute(**wide)), outputs(oracle.compute(**inputs))
        for k, v in out.items():
            if d := differs(v, precise[k], float("inf"), 0.0):
                return f"{k}: {d}"
            own = float((narrow[k].double() - precise[k]).pow(2).mean().sqrt())
            err = float((v.double() - precise[k]).pow(2).mean().sqrt())
            if not err <= oracle.multiplier * own + tol.get(v.dtype, 1e-2) / 10:
                return f"{k}: mismatch: rmse {err:.3g}, {own:.3g} in the input precision"
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
