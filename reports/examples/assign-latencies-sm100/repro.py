#!/usr/bin/env python3
"""TritonGPUAssignLatencies fails on sm_100: Descriptor GEMM with a hand-written next-tile prefetch in the K loop

Standalone reproducer written by triton-repro-suite (report assign-latencies-sm100).
It compiles one Triton kernel for sm_100 and needs nothing but `triton`:
no GPU, no torch, nothing from the suite.

    python repro.py

Exit status 1: the bug reproduces; the signature is printed.
Exit status 0: it does not (the kernel compiles, or it fails in another way,
which is printed too).

The compile runs in a child process of this script with an empty Triton cache
(a cached kernel would skip the failing pass) and Triton's MLIR reproducer
enabled (MLIR names the failing pass only then). The signature is computed as
triton-repro-suite computes it: outcome, compile stage, and the failing pass
(or the normalized error text).

Expected signature: compiler-error:ttgir:TritonGPUAssignLatencies
Seen with: triton 3.5.0, target sm_100, num_warps=4, num_stages=2
"""

import faulthandler
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback

import triton
import triton.language as tl

EXPECTED = 'compiler-error:ttgir:TritonGPUAssignLatencies'
TARGET = 'sm_100'
ARCH = 100
OPTIONS = {'num_warps': 4, 'num_stages': 2}
SIGNATURE = {'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'M': 'i32', 'N': 'i32', 'K': 'i32'}
CONSTEXPRS = {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32}
TIMEOUT_S = 600

@triton.jit
def gemm_prefetch(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    a_cur = a_desc.load([off_m, 0])
    b_cur = b_desc.load([0, off_n])
    for k in range(0, K, BLOCK_K):
        next_k = k + BLOCK_K
        a_next = a_cur
        b_next = b_cur
        if next_k < K:
            a_next = a_desc.load([off_m, next_k])
            b_next = b_desc.load([next_k, off_n])
        acc += tl.dot(a_cur, b_cur)
        a_cur = a_next
        b_cur = b_next
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))

KERNEL = gemm_prefetch


def ast_source():
    """ASTSource takes constexprs= keyed by name from Triton 3.3 on, constants= by position before."""
    from triton.compiler import ASTSource

    fn = KERNEL
    if "constexprs" in inspect.signature(ASTSource.__init__).parameters:
        full = {name: SIGNATURE.get(name, "constexpr") for name in fn.arg_names}
        return ASTSource(fn, full, constexprs=CONSTEXPRS)
    positional = {i: SIGNATURE[n] for i, n in enumerate(fn.arg_names) if n in SIGNATURE}
    constants = {i: CONSTEXPRS[n] for i, n in enumerate(fn.arg_names) if n in CONSTEXPRS}
    return ASTSource(fn, positional, constants=constants)


def compile_kernel():
    from triton.backends.compiler import GPUTarget

    return triton.compile(ast_source(), target=GPUTarget("cuda", ARCH, 32), options=OPTIONS)


# ---- the child: compile once, report what happened ------------------------------------------

STAGES = {
    "make_ir": "ttir",
    "ast_to_ttir": "ttir",
    "make_ttir": "ttir",
    "make_ttgir": "ttgir",
    "make_llir": "llir",
    "make_ptx": "ptx",
    "make_cubin": "cubin",
}


def child(report):
    faulthandler.enable()
    faulthandler.dump_traceback_later(max(TIMEOUT_S * 0.9, TIMEOUT_S - 5))
    try:
        compile_kernel()
    except BaseException as exc:
        traceback.print_exc(file=sys.stdout)  # stdout: stderr is read for MLIR's diagnostics
        sys.stdout.flush()
        stage = None
        for frame in traceback.extract_tb(exc.__traceback__):
            stage = STAGES.get(frame.name, stage)
        error = {"type": type(exc).__name__, "message": str(exc), "stage": stage}
        with open(report, "w") as handle:
            json.dump({"error": error}, handle)
        return 1
    with open(report, "w") as handle:
        json.dump({"ok": True}, handle)
    return 0


# ---- the parent: the signature, as the suite computes it ------------------------------------

NORMALIZE = (
    (re.compile(r"0x[0-9a-fA-F]+"), "0xX"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@~-]+)+/?"), "<path>"),
    (re.compile(r"\btmp[\w-]*"), "<tmp>"),
    (re.compile(r"%[\w.#$-]+"), "%V"),
    (re.compile(r"#[A-Za-z_][\w.]*"), "#A"),
    (re.compile(r"\d+"), "N"),
    (re.compile(r"\s+"), " "),
)
PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
MLIR_ERROR = re.compile(r"^.*?\berror: (.*)$", re.MULTILINE)
GENERIC_MLIR_ERRORS = ("Failures have been detected while processing an MLIR pass pipeline",)
PTXAS_CODE = re.compile(r"\b(C\d{4,5})\b")
PTXAS_ERROR_LINE = re.compile(r"ptxas\s*(?:fatal|error)\s*:\s*(.*)")
PTXAS_UNKNOWN_ARCH = re.compile(r"Value '(sm_\w+)' is not defined for option 'gpu-name'")
FAULTHANDLER_FRAME = re.compile(r'File ".*?", line \d+ in (\w+)')


def normalize(text):
    for pattern, placeholder in NORMALIZE:
        text = pattern.sub(placeholder, text)
    return text.strip()[:200]


def join(*parts):
    return ":".join(p for p in parts if p)


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def failed_pass(stderr):
    match = PASS_FAILURE.search(stderr)
    return match.group(1) if match else None


def first_mlir_error(stderr):
    for match in MLIR_ERROR.finditer(stderr):
        message = match.group(1).strip()
        if message not in GENERIC_MLIR_ERRORS:
            return message
    return None


def faulthandler_stage(stderr):
    for name in FAULTHANDLER_FRAME.findall(stderr):
        if name in STAGES:
            return STAGES[name]
    return None


def signature_of(report, returncode, stderr, timed_out):
    """None when the kernel compiled (or the toolchain cannot express the target)."""
    if timed_out:
        return join("timeout", "compile", faulthandler_stage(stderr))
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name
        return join("crash", name, "compile", faulthandler_stage(stderr), failed_pass(stderr))
    if report is None:
        return join("crash", f"exit-{returncode}", "compile")
    error = report.get("error")
    if not error:
        return None
    text, kind, stage = error["message"], error["type"], error.get("stage")
    combined = text + "\n" + stderr
    if PTXAS_UNKNOWN_ARCH.search(combined):
        return None
    if kind == "PTXASError" or "ptxas" in text.lower():
        code = PTXAS_CODE.search(combined)
        line = PTXAS_ERROR_LINE.search(combined)
        line = line.group(1) if line else first_line(text) or kind
        return join("ptxas-error", code.group(1) if code else normalize(line))
    if kind == "OutOfResources":
        return join("resource-limit", "shared-memory" if "shared" in text.lower() else normalize(text))
    pass_name = failed_pass(stderr)
    reason = pass_name or first_mlir_error(stderr) or first_line(text) or kind
    return join("compiler-error", stage, pass_name or normalize(f"{kind}: {reason}"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="triton-repro-") as work:
        report_path = os.path.join(work, "report.json")
        env = dict(
            os.environ,
            TRITON_CACHE_DIR=os.path.join(work, "cache"),
            TRITON_REPRODUCER_PATH=os.path.join(work, "mlir-reproducer"),
            PYTHONFAULTHANDLER="1",
        )
        argv = [sys.executable, os.path.abspath(__file__), "--child", report_path]
        timed_out, returncode = False, None
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, timeout=TIMEOUT_S)
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            timed_out, stdout, stderr = True, exc.stdout or b"", exc.stderr or b""
        stdout = stdout.decode(errors="replace")
        stderr = stderr.decode(errors="replace")
        report = None
        if os.path.exists(report_path):
            with open(report_path) as handle:
                report = json.load(handle)
    sys.stderr.write(stderr + stdout)
    sys.stderr.flush()
    found = signature_of(report, returncode, stderr, timed_out)
    print(f"triton {triton.__version__}, target {TARGET}, options {OPTIONS}")
    print(f"signature: {found or 'none'}")
    if found == EXPECTED:
        print(f"REPRODUCED: {EXPECTED}")
        return 1
    if found is None:
        print("not reproduced: the kernel compiled")
    else:
        print(f"not reproduced: it failed differently (expected {EXPECTED})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
