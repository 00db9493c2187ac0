"""NVGPUWarpSpecialization fails on sm_90: LLVM ERROR: unsupported load type for producer commit (triton 3.9.0)

Seen with triton 3.9.0, sm_90, num_warps=4, num_stages=3. Run `python repro.py`:
exit 1 when the bug shows (what the compile prints is the same bug as EXPECTED, judged by the
suite's own code, carried at the bottom), 0 when the kernel compiles, 2 when it fails another way.
Written by triton-repro-suite (report ws-pointer-dot-sm90).
"""

import os
import signal
import subprocess
import sys
import tempfile

# Anything raised outside the kernel's compile is this script's own failure: one line, exit 2.
hook = lambda kind, exc, tb: os._exit(print(f"this script failed, not the kernel: {kind.__name__}: {exc}", file=sys.stderr, flush=True) or 2)  # noqa: E731
sys.excepthook = hook if sys.argv[1:] != ["--child"] else sys.excepthook
import triton
import triton.language as tl


@triton.jit
def pointer_dot(
    a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc.to(tl.float16))


# ---- the compile call: triton.compile for sm_90, no GPU needed ----
from triton.backends.compiler import GPUTarget
PHASE, TARGET, ARCH = "compile", 'sm_90', 90
OPTIONS = {'num_warps': 4, 'num_stages': 3}
SIGNATURE = {'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'K': 'i32'}
CONSTEXPRS = {'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64, 'WARP_SPECIALIZE': True}
# What the JIT knows of the arguments (16-byte-aligned pointers, ints divisible by 16).
ATTRS = dict.fromkeys(['a_ptr', 'b_ptr', 'c_ptr', 'K'], [['tt.divisibility', 16]])


def run():
    src = ast_source(pointer_dot, SIGNATURE, CONSTEXPRS, ATTRS)
    triton.compile(src, target=GPUTarget("cuda", ARCH, 32), options=compile_options(OPTIONS))


# ---- the check: is what the compile printed the bug the suite saw? ----
EXPECTED = 'compiler-error:ttgir:NVGPUWarpSpecialization: LLVM ERROR: unsupported load type for producer commit'
TIMEOUT_S = 540


def child():  # the compile, naming each compile stage it enters (a crash keeps its stage)
    with stages_entered(lambda stage: print(f"compile stage: {stage}", file=sys.stderr, flush=True)):
        run()


def check():
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, TRITON_CACHE_DIR=scratch, PYTHONFAULTHANDLER="1")
        env["TRITON_REPRODUCER_PATH"] = os.path.join(scratch, "reproducer.mlir")
        argv = [sys.executable, os.path.abspath(__file__), "--child"]
        try:
            ran = subprocess.run(argv, env=env, capture_output=True, timeout=TIMEOUT_S)
            code, output = ran.returncode, ran.stderr + ran.stdout
        except subprocess.TimeoutExpired as killed:
            code, output = None, (killed.stderr or b"") + (killed.stdout or b"")
    output = output.decode(errors="replace")
    sys.stderr.write(output)
    if code is None:
        ended = f"hung (killed after {TIMEOUT_S} s)"
    elif code < 0:
        ended = f"crashed ({signal.Signals(-code).name})"
    else:
        ended = f"failed (exit status {code})" if code else "succeeded"
    print(f"triton {triton.__version__}, {TARGET}: {PHASE} {ended}")
    seen = printed_signature(output, code)
    print(f"expected: {EXPECTED}\nseen:     {seen or '-'}")
    if seen and same_bug(EXPECTED, seen):
        print("REPRODUCED")
        return 1
    print(f"not reproduced: the {PHASE} " + ("succeeded" if code == 0 else "failed otherwise"))
    return 0 if code == 0 else 2


# ---- carried verbatim from triton-repro-suite (suite/judgement.py): the engine's own code ----

import contextlib
import difflib
import inspect
import re
import sys


def source_form():
    from triton.backends import compiler
    from triton.compiler import ASTSource

    if "constexprs" in inspect.signature(ASTSource.__init__).parameters:
        return "constexprs"
    return "attrs-descriptor" if hasattr(compiler, "AttrsDescriptor") else "positional"


def ast_source(fn, signature, constexprs, attrs):
    from triton.compiler import ASTSource

    at = {name: i for i, name in enumerate(fn.arg_names)}
    hints = {at[n]: value for n, props in attrs.items() for _, value in props}
    form = source_form()
    if form == "constexprs":
        types = {n: "constexpr" if n in constexprs else signature.get(n, "constexpr") for n in at}
        by_path = {(at[n],): props for n, props in attrs.items() if n not in constexprs}
        return ASTSource(fn, types, constexprs=constexprs, attrs=by_path)
    if form == "attrs-descriptor":
        from triton.backends.compiler import AttrsDescriptor

        return ASTSource(fn, signature, constexprs, AttrsDescriptor.from_hints(hints))
    from triton.compiler.compiler import AttrsDescriptor

    ones, divisible = ([i for i, v in hints.items() if v == h] for h in (1, 16))
    positional = {at[n]: t for n, t in signature.items()}
    constants = {at[n]: v for n, v in constexprs.items()}
    return ASTSource(fn, positional, constants, AttrsDescriptor(tuple(divisible), tuple(ones)))


def as_tuples(value):
    if isinstance(value, (list, tuple)):
        return tuple(as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: as_tuples(v) for k, v in value.items()}
    return value


def compile_options(options):
    from triton.backends.nvidia.compiler import CUDAOptions

    known = CUDAOptions.__dataclass_fields__
    return {k: as_tuples(v) for k, v in options.items() if k in known}


STAGE_FUNCTIONS = {
    "make_ir": "ttir",
    "ast_to_ttir": "ttir",
    "make_ttir": "ttir",
    "make_ttgir": "ttgir",
    "make_llir": "llir",
    "make_ptx": "ptx",
    "make_cubin": "cubin",
}
FRONTEND_FUNCTIONS = frozenset({"parse_options", "cache_key", "make_ir", "ast_to_ttir"})
PASS_STAGE_FUNCTIONS = frozenset(STAGE_FUNCTIONS) - FRONTEND_FUNCTIONS
PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
MLIR_ERROR = re.compile(r"^(?:.*?:\d+:\d+: |loc\(.*?\): |\S*: )?error: (.*)$", re.MULTILINE)
GENERIC_MESSAGES = (
    "Failures have been detected while processing an MLIR pass pipeline",
    "PassManager::run failed",
)
ASSERTION = re.compile(r"Assertion [`'](.+?)' failed")
SAYS_NOTHING = re.compile(r"!*\(?(?:false|0|nullptr)\)?")
ASSERTING_FUNCTION = re.compile(r":\d+: [^(]*?([A-Za-z_]\w*)\(")
LLVM_ERROR = re.compile(r"LLVM ERROR: (.+)")
UNREACHABLE = re.compile(r"(?:^|\n)([^\n]+)\nUNREACHABLE executed")
TERMINATE = re.compile(
    r"terminate called after throwing an instance of '([^']+)'(?:\s+what\(\):\s*(.+))?"
)
PTXAS_CODE = re.compile(r"\b(C\d{4,5})\b")
PTXAS_ERROR_LINE = re.compile(r"ptxas\b[^\n]*?\berror\s*:\s*(.*)")
PTXAS_FATAL_LINE = re.compile(r"ptxas\b[^\n]*?\bfatal\s*:\s*(.*)")
PTXAS_UNKNOWN_ARCH = re.compile(r"Value '(sm_\w+)' is not defined for option 'gpu-name'")
FAULTHANDLER_FRAME = re.compile(r'File ".*?", line \d+ in (\w+)')
CARET_LINE = re.compile(r"^\s*\^+\s*$")
COMPILATION_AT = re.compile(r"^at \d+:\d+:")
NOT_IMPLEMENTED = re.compile(
    r"\bNYI\b|not (?:yet )?implemented|\bnot supported\b|\bunsupported\b"
    r"|\bonly supports?\b|\bis only supported\b",
    re.IGNORECASE,
)
REQUIREMENT = re.compile(
    r"\brequires?\b|\bmust\b|\bshould (?:be|have)\b|\bexpected\b|\bnot allowed\b"
    r"|(?-i:\bGot\b)",  # "... of shape [64, 2]. Got [2, 64, 2]", not "got an unexpected keyword"
    re.IGNORECASE,
)
REFUSAL_TYPES = frozenset(
    {"ValueError", "NotImplementedError", "AssertionError", "CompilationError"}
)
_NORMALIZE = (
    (re.compile(r"%(?=llvm\.)"), ""),  # an intrinsic's name is kept, not taken for an SSA value
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@~-]+)+/?"), "<path>"),
    (re.compile(r"\btmp[\w-]*"), "<tmp>"),
    (re.compile(r"%[\w.#$-]+"), "%V"),
    (re.compile(r"\^bb\d+"), "^bbN"),
    (re.compile(r"#[A-Za-z_][\w.]*"), "#A"),
    (re.compile(r"\b\d+(?:x\d+)*x(?=[A-Za-z?!])"), "?x"),  # tensor<128x64xf16> -> tensor<?xf16>
    (re.compile(r"\bm\d+n\d+k\d+"), "mMnNkK"),  # MMA instruction shapes
    (re.compile(r"\bt\d+\b"), "tN"),  # SelectionDAG node names
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
)
MAX_LENGTH = 200


def normalize(text):
    for pattern, placeholder in _NORMALIZE:
        text = pattern.sub(placeholder, text)
    return text.strip()[:MAX_LENGTH]


def compose(family, key=""):
    head = ":".join(p for p in family if p)
    return f"{head}: {key}" if key else head


def family_of(signature):
    return signature.split(": ", 1)[0]


def message_of(signature):
    parts = signature.split(": ", 1)
    return parts[1] if len(parts) == 2 else ""


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def meaningful_message(text):
    for pattern, shape in (
        (ASSERTION, "Assertion `{}' failed"),
        (LLVM_ERROR, "LLVM ERROR: {}"),
        (UNREACHABLE, "{} (UNREACHABLE)"),
    ):
        found = pattern.search(text)
        if found:
            message = shape.format(found.group(1).strip())
            if pattern is ASSERTION and SAYS_NOTHING.fullmatch(found.group(1).strip()):
                line = (text[: found.start()].splitlines() or [""])[-1]
                where = ASSERTING_FUNCTION.search(line.replace("(anonymous namespace)", ""))
                if where:
                    message += f" in {where.group(1)}"
            return message
    thrown = TERMINATE.search(text)
    if thrown:
        what = f": {thrown.group(2).strip()}" if thrown.group(2) else ""
        return f"uncaught {thrown.group(1)}{what}"
    for match in MLIR_ERROR.finditer(text):
        message = match.group(1).strip()
        if message and message not in GENERIC_MESSAGES:
            return message
    return None


def python_message(kind, text, cause=""):
    if kind == "CompilationError":
        lines = text.splitlines()
        carets = [i for i, line in enumerate(lines) if CARET_LINE.match(line)]
        after = first_line("\n".join(lines[carets[-1] + 1 :])) if carets else ""
        if after:
            return after
        if first_line(cause):
            return re.sub(r"^\w+: ", "", first_line(cause))
        return next(
            (ln.strip() for ln in lines if ln.strip() and not COMPILATION_AT.match(ln)), kind
        )
    line = first_line(text)
    if not line or line in GENERIC_MESSAGES:
        return ""
    return f"{kind}: {line}" if kind else line


def faulthandler_stage(output):
    return next(
        (STAGE_FUNCTIONS[n] for n in FAULTHANDLER_FRAME.findall(output) if n in STAGE_FUNCTIONS),
        None,
    )


def failed_pass(output):
    match = PASS_FAILURE.search(output)
    return match.group(1) if match else None


def stage_of(frames):
    stage = None
    for name in frames:
        stage = STAGE_FUNCTIONS.get(name, stage)
    return stage


@contextlib.contextmanager
def stages_entered(on_stage):
    entered: list[str] = []

    def profile(frame, event, arg):
        stage = STAGE_FUNCTIONS.get(frame.f_code.co_name) if event == "call" else None
        if stage and (not entered or entered[-1] != stage):
            entered.append(stage)
            on_stage(stage)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


STAGE_LINE = re.compile(r"^compile stage: (\w+)$", re.MULTILINE)
TRACEBACK_HEAD = "Traceback (most recent call last):"
TRACEBACK_FRAME = re.compile(r'^  File "(.+?)", line \d+, in (\S+)', re.MULTILINE)
TRITON_PACKAGE = re.compile(r"[/\\]triton[/\\](?:compiler|language|runtime|backends|_C)[/\\]")
CHAINED = re.compile(r"\n\s*\n(?:The above exception|During handling of the above)[^\n]*\n")


def printed_error(output):
    blocks = output.split(TRACEBACK_HEAD)
    if len(blocks) < 2:
        return None
    frames, kind, message = _printed(CHAINED.split(blocks[-1])[0])
    cause = ""
    if len(blocks) > 2:
        _, cause_kind, cause_message = _printed(CHAINED.split(blocks[-2])[0])
        cause = f"{cause_kind}: {cause_message}" if cause_kind else cause_message
    return kind, message, cause, frames


def _printed(block):
    lines = block.strip("\n").splitlines()
    at = next((i for i, line in enumerate(lines) if line and not line[0].isspace()), len(lines))
    kind, _, message = "\n".join(lines[at:]).partition(": ")
    if re.fullmatch(r"[\w.]+", kind):
        return TRACEBACK_FRAME.findall(block), kind.rsplit(".", 1)[-1], message.strip()
    return TRACEBACK_FRAME.findall(block), "", "\n".join(lines[at:]).strip()


def entered_compile(frames):
    return any(
        name in STAGE_FUNCTIONS
        or (name == "compile" and path.replace("\\", "/").endswith("triton/compiler/compiler.py"))
        for path, name in frames
    )


def origin_of(names, compiling):
    if any(name in PASS_STAGE_FUNCTIONS for name in names):
        return "pipeline"
    if not compiling:
        return "glue"
    return "frontend" if any(name in FRONTEND_FUNCTIONS for name in names) else "compile"


def printed_signature(output, returncode):
    stages = STAGE_LINE.findall(output)
    stage = faulthandler_stage(output) or (stages[-1] if stages else None)
    if returncode is None:
        return compose(["timeout", "compile", stage])
    raw = meaningful_message(output)
    key = normalize(raw) if raw else ""
    if returncode < 0:
        import signal

        name = signal.Signals(-returncode).name
        return compose(["crash", name, "compile", stage, failed_pass(output)], key)
    if returncode == 0:
        return compose(["compiler-diagnostic"], key) if raw else None
    error = printed_error(output)
    if error is None:
        return compose(["crash", f"exit-{returncode}", "compile"], key)
    if PTXAS_UNKNOWN_ARCH.search(output):
        return None  # a toolchain gap: this release's ptxas does not know the target
    return raised_signature(output, error, raw)


def raised_signature(output, error, raw):
    kind, message, cause, frames = error
    if kind == "PTXASError" or "ptxas" in message.lower():
        code = PTXAS_CODE.search(output)
        line = PTXAS_ERROR_LINE.search(output) or PTXAS_FATAL_LINE.search(output)
        said = line.group(1).strip() if line else first_line(message) or kind
        return compose(["ptxas-error", code and code.group(1)], "" if code else normalize(said))
    if kind == "OutOfResources":
        limit = "shared-memory" if "shared" in message.lower() else normalize(message)
        return compose(["resource-limit", limit])
    origin = origin_of([name for _, name in frames], entered_compile(frames))
    said = python_message(kind, message, cause) or first_line(message) or kind
    refused = origin == "frontend" or (
        origin != "glue"
        and bool(frames and TRITON_PACKAGE.search(frames[-1][0]))
        and kind in REFUSAL_TYPES
        and (NOT_IMPLEMENTED.search(said) or REQUIREMENT.search(said))
        and not failed_pass(output)
        and not raw
    )
    if origin == "glue" or refused:
        return None
    pass_name = failed_pass(output)
    found = raw or python_message(kind, message, cause)
    return compose(
        ["compiler-error", stage_of([n for _, n in frames]), pass_name],
        normalize(found) if found else "",
    )


PASS_NAME = re.compile(r"^(?!SIG)[A-Z]\w*[a-z]\w*$|^(?!exit-\d+$)[a-z]\w*-[\w-]+$")
_PASS_OUTCOMES = ("compiler-error", "crash", "timeout")
SIMILAR = 0.6
_BOILERPLATE = frozenset(
    {"assertion", "failed", "llvm", "error", "false", "true", "nullptr", "null", "unreachable"}
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def named_pass(signature):
    parts = family_of(signature).split(":")
    if parts[0] not in _PASS_OUTCOMES:
        return None
    return next((p for p in parts[1:] if PASS_NAME.match(p)), None)


def same_bug(one, other):
    if family_of(one) != family_of(other):
        return reported_apart(one, other)
    if one == other or named_pass(one):
        return True
    return difflib.SequenceMatcher(None, message_of(one), message_of(other)).ratio() >= SIMILAR


def informative(key):
    return len({w.lower() for w in _WORD.findall(key)} - _BOILERPLATE) >= 2


def compile_failure_site(signature):
    parts = family_of(signature).split(":")
    if parts[0] == "crash" and len(parts) > 2 and parts[2] == "compile":
        rest = parts[3:]
    elif parts[0] == "compiler-error":
        rest = parts[1:]
    else:
        return None
    stages = set(STAGE_FUNCTIONS.values())
    stage = next((p for p in rest if p in stages), None)
    return parts[0], stage, next((p for p in rest if PASS_NAME.match(p)), None)


def reported_apart(one, other):
    site_a, site_b = compile_failure_site(one), compile_failure_site(other)
    key = message_of(one)
    if site_a is None or site_b is None or not key or key != message_of(other):
        return False
    (_, stage_a, pass_a), (_, stage_b, pass_b) = site_a, site_b
    return (
        informative(key)
        and (not stage_a or not stage_b or stage_a == stage_b)
        and (not pass_a or not pass_b or pass_a == pass_b)
    )



if __name__ == "__main__":
    sys.exit(child() if sys.argv[1:] == ["--child"] else check())
