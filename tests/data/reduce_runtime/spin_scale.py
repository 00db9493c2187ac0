"""A row scale whose software spin-wait never ends when the wait is turned on.

A kernel library's "wait for the producer's flag" loop, here on a flag nobody sets: with
``WAIT=True`` the launch spins past the ``Hang`` oracle's bound (a hang, not a wrong
result); with ``WAIT=False`` it scales its row and passes its reference. Triton's
interpreter shows both on a CPU (``TRITON_INTERPRET=1``): the reducer's twin rule is tested
on it (a hang's passing twin may compute a wrong value, never hang or fail otherwise).
"""

import triton
import triton.language as tl

from suite import Choice, Hang, Reference, Reproducer
from suite.checks import device, poisoned, random_input, torch_dtype

REPRO = Reproducer(
    id="spin-scale",
    title="a row scale's spin-wait on a flag nobody sets",
    family="program-bug",
    params=(Choice("WAIT", (False, True)), Choice("BLOCK", (16,)), Choice("dtype", ("fp32",))),
    configs={
        "trigger": [{"WAIT": True, "BLOCK": 16, "dtype": "fp32"}],
        "nearest-pass": [{"WAIT": False, "BLOCK": 16, "dtype": "fp32"}],
    },
    targets=("sm_90",),
    label="wait{WAIT}",
    oracles=(Hang(bound_s=4.0), Reference(lambda x, flag: x * 2.0)),
)


@triton.jit
def _wait_for(flag_ptr):
    # Spins until the producer sets the flag.
    seen = tl.load(flag_ptr)
    while seen == 0:
        seen = tl.load(flag_ptr)


@triton.jit
def scale_kernel(x_ptr, y_ptr, flag_ptr, n, BLOCK: tl.constexpr, WAIT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if WAIT:
        _wait_for(flag_ptr)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


@REPRO.inputs
def make_inputs(case):
    import torch

    return {
        "x": random_input((40,), case["dtype"]),
        "flag": torch.zeros(1, dtype=torch.int32, device=device()),
    }


@REPRO.launch
def launch_case(case, x, flag):
    y = poisoned(x.shape, torch_dtype(case["dtype"]))
    grid = (triton.cdiv(x.numel(), case["BLOCK"]),)
    scale_kernel[grid](x, y, flag, x.numel(), BLOCK=case["BLOCK"], WAIT=case["WAIT"])
    return y
