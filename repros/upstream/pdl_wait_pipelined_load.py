"""A pipelined loop loads a tile before its in-loop ``gdc_wait()``: a PDL consumer reads stale data.

triton-lang/triton#11905 (reported 2026-09 on an H20, sm_90, triton 3.7.1; open, fix proposed in
#11906): a consumer kernel launched with programmatic dependent launch (``launch_pdl=True``)
calls ``tl.extra.cuda.gdc_wait()`` inside its K loop, right before the load of the input its
producer writes. With ``num_stages >= 2`` the pipeliner issues the first tiles' loads
(``async_copy_global_to_local``) in the loop's prologue, before the first wait, so the consumer
can read the input before the producer has written it. One stage, or the wait before the loop,
is right. Compiled for sm_90 by triton 3.6.0 the prologue holds those copies ahead of the wait
(the TTGIR, 2026-11-27). Launched on an H100 with triton 3.6.0 (2026-11-27,
docs/gpu-results.md): NaN in the product with 2 stages (fp16, bf16) and 3 stages (fp16); one
stage, the wait before the loop, and no PDL are right.

The kernels here: ``publish`` (one program) lets its dependent launch at once, sleeps in
``nanosleep`` (the report's delay: it widens the window the bug needs), then copies ``src``
into ``x``, a buffer filled with NaN before; ``consume`` (one program) computes
``a @ x`` over K in BLOCK_K steps. The oracle is a float64 reference of ``a @ src``: a tile
read before the producer wrote it brings NaN into the product. A first pair compiles both
kernels (so that no compile stands between the producer's launch and the consumer's) and is
not checked; the next ROUNDS pairs, each on a fresh NaN buffer, must all be right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 32
K = 256
DELAY_NS = 500_000  # nanosleep's ceiling is 1 ms
ROUNDS = 3  # checked producer/consumer pairs after the first (a race may miss one round)


def _config(stages, wait="in-loop", pdl=True, dtype="fp16"):
    return {"num_stages": stages, "num_warps": 4, "WAIT": wait, "PDL": pdl, "dtype": dtype}


REPRO = Reproducer(
    id="upstream-11905-pdl-wait-pipelined-load",
    title="a pipelined load is issued before the in-loop gdc_wait: a PDL consumer reads stale data",
    family="triton-pipeliner",
    references=(
        "https://github.com/triton-lang/triton/issues/11905",
        "https://github.com/triton-lang/triton/pull/11906",
    ),
    params=(
        Choice("num_stages", (1, 2, 3)),
        Choice("num_warps", (4,)),
        Choice("WAIT", ("in-loop", "before-loop")),
        Choice("PDL", (True, False)),
        Choice("dtype", ("fp16", "bf16")),
    ),
    configs={
        "trigger": [_config(2), _config(3), _config(2, dtype="bf16")],
        "nearest-pass": [_config(1), _config(2, wait="before-loop"), _config(2, pdl=False)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.extra.cuda.gdc_wait",),
    label="s{num_stages}-{WAIT}-pdl{PDL}-{dtype}",
    oracles=(Reference(lambda a, src: (a @ src).expand(ROUNDS, -1, -1)),),
)


@triton.jit
def publish(src_ptr, x_ptr, delay_ns, NUMEL: tl.constexpr, BLOCK: tl.constexpr):
    tl.extra.cuda.gdc_launch_dependents()
    slept = tl.inline_asm_elementwise(
        "nanosleep.u32 $1;\n\tmov.u32 $0, $1;",
        "=r,r",
        [delay_ns],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )
    # Zero at run time, unknown to the compiler: the stores stay after the sleep.
    shift = slept - delay_ns
    for start in range(0, NUMEL, BLOCK):
        offs = start + shift + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(src_ptr + offs))


@triton.jit
def consume(
    a_ptr,
    x_ptr,
    out_ptr,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WAIT: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    if WAIT == "before-loop":
        tl.extra.cuda.gdc_wait()
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if WAIT == "in-loop":
            tl.extra.cuda.gdc_wait()
        x = tl.load(x_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, x, acc)
    tl.store(out_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)


def _constexprs(case):
    return {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K, "WAIT": case["WAIT"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"a_ptr": element, "x_ptr": element, "out_ptr": "*fp32", "K": "i32"}
    return compile_kernel(consume, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    return {
        "a": random_input((BLOCK_M, K), case["dtype"]),
        "src": random_input((K, BLOCK_N), case["dtype"]),
    }


def _produce_then_consume(case, a, src):
    import torch

    x = poisoned(src.shape, torch_dtype(case["dtype"]))
    out = poisoned((BLOCK_M, BLOCK_N), torch.float32)
    publish[(1,)](src, x, DELAY_NS, NUMEL=src.numel(), BLOCK=1024)
    consume[(1,)](a, x, out, K, **_constexprs(case), **case.options, launch_pdl=case["PDL"])
    return out


@REPRO.launch
def launch_case(case, a, src):
    import torch

    _produce_then_consume(case, a, src)  # compiles both kernels
    rounds = []
    for _ in range(ROUNDS):
        torch.cuda.synchronize()
        rounds.append(_produce_then_consume(case, a, src))
    return torch.stack(rounds)
