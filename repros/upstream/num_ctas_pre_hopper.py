"""num_ctas=2 (a thread-block cluster) on a pre-Hopper target (sm_80).

triton-lang/triton#7811: compiling any kernel with num_ctas > 1 for a GPU
below sm_90 aborts the process in LLVM instruction selection
("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.read.ptx.sreg.clusterid.x"):
clusters only exist from Hopper on. Fixed by #7812 ("[FRONTEND] Better error
for num_cta > 1 on sm < 90"), which makes the CUDA backend's option parsing
raise "ValueError: num_ctas > 1 requires NVIDIA SM90+ (Hopper)" instead: after
the fix the config is a clean user error, not a crash. num_ctas=1 compiles.

What upstream history implies: 3.3.0-3.4.0 abort in LLVM (the report's message);
from 3.5.0, the first release printing #7812's diagnostic, Triton refuses the
config (user-error:triton-rejects; the fix is the diagnostic, so there is no
release where it compiles). Unverified: 3.0-3.2, where ptxas rejects the PTX
("Feature '%clusterid' requires .target sm_90 or higher") instead of LLVM
aborting; that this is the same missing check is an inference from the message,
not something the report says.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(num_ctas):
    return {"BLOCK_SIZE": 128, "num_warps": 4, "num_ctas": num_ctas}


REPRO = Reproducer(
    id="upstream-7811-num-ctas-pre-hopper",
    title="num_ctas > 1 on sm_80: LLVM cannot select clusterid (abort)",
    family="triton-cluster",
    references=(
        "https://github.com/triton-lang/triton/issues/7811",
        "https://github.com/triton-lang/triton/pull/7812",
    ),
    params=(
        Pow2("BLOCK_SIZE", 128, 1024),
        Choice("num_warps", (4, 8)),
        Choice("num_ctas", (1, 2, 4)),
    ),
    configs={"trigger": [_config(2)], "nearest-pass": [_config(1)]},
    default_sets=("trigger",),
    targets=("sm_80",),
    label="b{BLOCK_SIZE}-w{num_warps}-ctas{num_ctas}",
)


@triton.jit
def add(x_ptr, y_ptr, out_ptr, size, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < size
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@REPRO.compile
def compile_case(case):
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "size": "i32"}
    return compile_kernel(add, case, signature, {"BLOCK_SIZE": case["BLOCK_SIZE"]})
