"""One source of judgement: what differs between Triton releases, and how a failure is judged.

The engine compiles and judges with this module (:mod:`suite.tritonc`,
:mod:`suite.engine.signature`, :mod:`suite.engine.same_bug`, :mod:`suite.oracles`), and the
standalone programs the suite hands out carry the code they run verbatim (the closure of
the names they call, :func:`suite.standalone_kit.carried`): the report's ``repro.py`` (a
compile's or a launch's) and the reducer's ``reduced.py``; the issue's ``snippet.py`` is
written in the form :func:`source_form` found in the failing release. The engine and
``repro.py`` cannot disagree.

- **tolerances**: the oracles' (atol, rtol) by dtype;
- **compile call**: the ``ASTSource`` form and the compile options of the installed release,
  probed from its API, never read from a version number;
- **launch**: the scratch allocator of a release that has one;
- **evidence**: the normalisation of failure text across releases' wordings, the signature of
  a compile (or a launch) that a child ran and printed (:func:`printed_signature`,
  :func:`printed_launch_signature`), and the same-bug rule
  the matrix, bisect and ``repro.py`` apply (:func:`same_bug`);
- **engine** (carried by none): the bundled ptxas, a launcher built without a launch, a
  captured ``ASTSource``'s attributes in any release's form, the options a release derives.

Standard library only; triton is imported by the functions that need it, when called.
"""

import contextlib
import difflib
import inspect
import re
import sys

# ---- tolerances ----

#: (absolute, relative) tolerance by dtype name for comparing two results of one kernel.
AGREEMENT = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (6e-2, 2e-2),
    "float32": (1e-4, 1e-4),
    "float64": (1e-10, 1e-10),
    "float8_e4m3fn": (1.5e-1, 1.5e-1),
    "float8_e5m2": (2.5e-1, 2.5e-1),
}


def tolerance(dtype_name):
    """(atol, rtol) for a dtype (``bfloat16`` or ``torch.bfloat16``); float16's otherwise."""
    return AGREEMENT.get(str(dtype_name).removeprefix("torch."), AGREEMENT["float16"])


# ---- compile call ----


def source_form():
    """How the installed release's ``ASTSource`` takes a kernel: ``constexprs`` (3.3 on: a
    name-keyed signature naming every argument, attrs by path ``(index,)``),
    ``attrs-descriptor`` (3.2: by name, an ``AttrsDescriptor``) or ``positional`` (3.0, 3.1)."""
    from triton.backends import compiler
    from triton.compiler import ASTSource

    if "constexprs" in inspect.signature(ASTSource.__init__).parameters:
        return "constexprs"
    return "attrs-descriptor" if hasattr(compiler, "AttrsDescriptor") else "positional"


def ast_source(fn, signature, constexprs, attrs):
    """``ASTSource`` in the installed release's form. ``signature``: the non-constexpr
    arguments' types; ``constexprs``: the values; ``attrs``: ``[[attribute, value], ...]`` by
    argument name (``tt.divisibility`` 16, ``tt.equal_to`` 1)."""
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
    """Lists (JSON's) back to the tuples Triton's options hold: from 3.3 on the options are
    hashed, and ``cluster_dims=[1, 1, 1]`` raises ``TypeError: unhashable type: 'list'``."""
    if isinstance(value, (list, tuple)):
        return tuple(as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: as_tuples(v) for k, v in value.items()}
    return value


def compile_options(options):
    """``options`` as the installed release's CUDA backend takes them: tuples kept, and only
    the options it has (``cluster_dims`` went in 3.9, ``launch_pdl`` came in 3.5)."""
    from triton.backends.nvidia.compiler import CUDAOptions

    known = CUDAOptions.__dataclass_fields__
    return {k: as_tuples(v) for k, v in options.items() if k in known}


# ---- launch ----


def set_allocator(allocate):
    """Give Triton the global scratch allocator that device-side tensor descriptors need
    (``allocate(size, align, stream)``); a release without one (before 3.3) needs none."""
    import triton

    if hasattr(triton, "set_allocator"):
        triton.set_allocator(allocate)


# ---- evidence ----

#: The functions that run each compile stage, in Triton's backends.
STAGE_FUNCTIONS = {
    "make_ir": "ttir",
    "ast_to_ttir": "ttir",
    "make_ttir": "ttir",
    "make_ttgir": "ttgir",
    "make_llir": "llir",
    "make_ptx": "ptx",
    "make_cubin": "cubin",
}
#: Triton's Python turning the kernel into TTIR: its options, the walk of the kernel's source
#: for its cache key (3.0-3.2 resolve every ``tl.`` name there), the code generator.
FRONTEND_FUNCTIONS = frozenset({"parse_options", "cache_key", "make_ir", "ast_to_ttir"})
#: The stages that run MLIR passes, LLVM or ptxas.
PASS_STAGE_FUNCTIONS = frozenset(STAGE_FUNCTIONS) - FRONTEND_FUNCTIONS

PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
# An MLIR diagnostic: "<location>: error: text" or a bare "error: text".
MLIR_ERROR = re.compile(r"^(?:.*?:\d+:\d+: |loc\(.*?\): |\S*: )?error: (.*)$", re.MULTILINE)
GENERIC_MESSAGES = (
    "Failures have been detected while processing an MLIR pass pipeline",
    "PassManager::run failed",
)
ASSERTION = re.compile(r"Assertion [`'](.+?)' failed")
#: An assertion's condition that says nothing of what failed (``assert(false)``).
SAYS_NOTHING = re.compile(r"!*\(?(?:false|0|nullptr)\)?")
#: The function an assertion failed in, from glibc's ``file:line: FUNCTION: Assertion`` (the
#: first name called with ``(``).
ASSERTING_FUNCTION = re.compile(r":\d+: [^(]*?([A-Za-z_]\w*)\(")
LLVM_ERROR = re.compile(r"LLVM ERROR: (.+)")
UNREACHABLE = re.compile(r"(?:^|\n)([^\n]+)\nUNREACHABLE executed")
TERMINATE = re.compile(
    r"terminate called after throwing an instance of '([^']+)'(?:\s+what\(\):\s*(.+))?"
)
PTXAS_CODE = re.compile(r"\b(C\d{4,5})\b")
# ptxas names the file and line before "error"; the closing "fatal : Ptx assembly aborted due
# to errors" says only that something was wrong, so it is the fallback.
PTXAS_ERROR_LINE = re.compile(r"ptxas\b[^\n]*?\berror\s*:\s*(.*)")
PTXAS_FATAL_LINE = re.compile(r"ptxas\b[^\n]*?\bfatal\s*:\s*(.*)")
PTXAS_UNKNOWN_ARCH = re.compile(r"Value '(sm_\w+)' is not defined for option 'gpu-name'")
FAULTHANDLER_FRAME = re.compile(r'File ".*?", line \d+ in (\w+)')
CARET_LINE = re.compile(r"^\s*\^+\s*$")
COMPILATION_AT = re.compile(r"^at \d+:\d+:")
#: Triton's Python refusing what it cannot do yet: the release cannot express the kernel.
NOT_IMPLEMENTED = re.compile(
    r"\bNYI\b|not (?:yet )?implemented|\bnot supported\b|\bunsupported\b"
    r"|\bonly supports?\b|\bis only supported\b",
    re.IGNORECASE,
)
#: Triton's Python refusing the input: a documented limit of the kernel or its options.
REQUIREMENT = re.compile(
    r"\brequires?\b|\bmust\b|\bshould (?:be|have)\b|\bexpected\b|\bnot allowed\b"
    r"|(?-i:\bGot\b)",  # "... of shape [64, 2]. Got [2, 64, 2]", not "got an unexpected keyword"
    re.IGNORECASE,
)
#: The errors Triton's Python raises for a refusal outside its frontend (a slip raises others).
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
    """The stable form of one line of failure text: paths, addresses, numbers, SSA names and
    shapes stripped, the intrinsic name kept."""
    for pattern, placeholder in _NORMALIZE:
        text = pattern.sub(placeholder, text)
    return text.strip()[:MAX_LENGTH]


def compose(family, key=""):
    """``family`` colon-joined (empty parts dropped), then ``: key`` when there is one."""
    head = ":".join(p for p in family if p)
    return f"{head}: {key}" if key else head


def family_of(signature):
    """The family of a signature: everything before the message key."""
    return signature.split(": ", 1)[0]


def message_of(signature):
    """The normalized message key of a signature ('' when it has none)."""
    parts = signature.split(": ", 1)
    return parts[1] if len(parts) == 2 else ""


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def meaningful_message(text):
    """The first meaningful message of native output: an assertion, ``LLVM ERROR``, an
    unreachable, an uncaught C++ exception, else the first non-generic MLIR error."""
    for pattern, shape in (
        (ASSERTION, "Assertion `{}' failed"),
        (LLVM_ERROR, "LLVM ERROR: {}"),
        (UNREACHABLE, "{} (UNREACHABLE)"),
    ):
        found = pattern.search(text)
        if found:
            message = shape.format(found.group(1).strip())
            if pattern is ASSERTION and SAYS_NOTHING.fullmatch(found.group(1).strip()):
                # assert(false) names no condition: the function it failed in tells two such
                # assertions apart, and is what upstream's issue names.
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
    """``Type: message`` of a Python error; a frontend ``CompilationError`` gives the error
    under its source excerpt (or its cause), not ``at 12:8:``."""
    if kind == "CompilationError":
        lines = text.splitlines()
        carets = [i for i, line in enumerate(lines) if CARET_LINE.match(line)]
        after = first_line("\n".join(lines[carets[-1] + 1 :])) if carets else ""
        if after:
            return after
        # Older releases keep the message in the cause, newer ones after the excerpt.
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
    """The stage of faulthandler's innermost frame that names one (it lists innermost first)."""
    return next(
        (STAGE_FUNCTIONS[n] for n in FAULTHANDLER_FRAME.findall(output) if n in STAGE_FUNCTIONS),
        None,
    )


def failed_pass(output):
    match = PASS_FAILURE.search(output)
    return match.group(1) if match else None


def stage_of(frames):
    """The compile stage of the innermost frame that names one (frames outermost first)."""
    stage = None
    for name in frames:
        stage = STAGE_FUNCTIONS.get(name, stage)
    return stage


@contextlib.contextmanager
def stages_entered(on_stage):
    """Call ``on_stage`` with each compile stage as Triton enters it: a native crash or a
    hang whose faulthandler frames are lost (libtriton's LLVM may install its signal handlers
    over faulthandler's) still names its stage."""
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


#: What a standalone program's child prints as it enters a stage (:func:`stages_entered`).
STAGE_LINE = re.compile(r"^compile stage: (\w+)$", re.MULTILINE)
TRACEBACK_HEAD = "Traceback (most recent call last):"
TRACEBACK_FRAME = re.compile(r'^  File "(.+?)", line \d+, in (\S+)', re.MULTILINE)
#: A file of Triton's own Python (its frontend, runtime or backends).
TRITON_PACKAGE = re.compile(r"[/\\]triton[/\\](?:compiler|language|runtime|backends|_C)[/\\]")
CHAINED = re.compile(r"\n\s*\n(?:The above exception|During handling of the above)[^\n]*\n")


def printed_error(output):
    """``(type, message, cause, frames)`` of the last traceback Python printed in ``output``
    (frames as ``(file, function)``, outermost first); ``None`` when there is none."""
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
    """The frames, the type and the message of one printed traceback."""
    lines = block.strip("\n").splitlines()
    at = next((i for i, line in enumerate(lines) if line and not line[0].isspace()), len(lines))
    kind, _, message = "\n".join(lines[at:]).partition(": ")
    if re.fullmatch(r"[\w.]+", kind):
        return TRACEBACK_FRAME.findall(block), kind.rsplit(".", 1)[-1], message.strip()
    return TRACEBACK_FRAME.findall(block), "", "\n".join(lines[at:]).strip()


def entered_compile(frames):
    """Whether Triton's compile (``triton.compile`` or a stage) was running: ``frames`` as
    ``(file, function)``."""
    return any(
        name in STAGE_FUNCTIONS
        or (name == "compile" and path.replace("\\", "/").endswith("triton/compiler/compiler.py"))
        for path, name in frames
    )


def origin_of(names, compiling):
    """Who raised an exception, from its traceback's function names: ``glue`` (outside
    Triton's compile), ``frontend`` (Triton's Python making TTIR), ``pipeline`` (a stage
    running passes, LLVM or ptxas) or ``compile`` (``triton.compile`` around the stages)."""
    if any(name in PASS_STAGE_FUNCTIONS for name in names):
        return "pipeline"
    if not compiling:
        return "glue"
    return "frontend" if any(name in FRONTEND_FUNCTIONS for name in names) else "compile"


def printed_signature(output, returncode):
    """The signature of a compile that ran in a child which printed ``output`` and ended with
    ``returncode`` (negative: killed by that signal; ``None``: killed as hung), as the engine
    judges a case that ended so; ``None`` when it compiled cleanly, when Triton's own Python
    refused the kernel, or when the program failed before Triton compiled anything."""
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
    """The signature of a compile that raised ``error`` (``printed_error``'s), ``raw`` the
    native message it printed; ``None`` when Triton's Python refused the kernel or the
    program's own code raised."""
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


def printed_launch_signature(output, returncode):
    """The signature of a launch that ran in a child which printed ``output`` and ended with
    ``returncode``, as the engine's child judges a launch that ends so: killed as hung, killed
    by a signal (with the native message), or raising (``runtime-error:launch:<type>``); ``None``
    when it launched cleanly."""
    if returncode is None:
        return compose(["timeout", "launch"])
    raw = meaningful_message(output)
    key = normalize(raw) if raw else ""
    if returncode < 0:
        import signal

        name = signal.Signals(-returncode).name
        return compose(["crash", name, "launch", failed_pass(output)], key)
    if returncode == 0:
        return None
    error = printed_error(output)
    if error is None:
        return compose(["crash", f"exit-{returncode}", "launch"], key)
    kind, message, _, _ = error
    return compose(["runtime-error", "launch", kind], normalize(first_line(message)))


# A pass: CamelCase with at least one lower-case letter (TritonGPUAssignLatencies; never a
# signal like SIGABRT), or a dashed pipeline name (tritongpu-assign-latencies; never exit-1).
PASS_NAME = re.compile(r"^(?!SIG)[A-Z]\w*[a-z]\w*$|^(?!exit-\d+$)[a-z]\w*-[\w-]+$")
_PASS_OUTCOMES = ("compiler-error", "crash", "timeout")
#: How alike two messages of one family must be (difflib's ratio) to be one bug.
SIMILAR = 0.6
#: Words that say nothing about where a failure happened (``Assertion `false' failed``).
_BOILERPLATE = frozenset(
    {"assertion", "failed", "llvm", "error", "false", "true", "nullptr", "null", "unreachable"}
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def named_pass(signature):
    """The pass a compile failure's family names, if any."""
    parts = family_of(signature).split(":")
    if parts[0] not in _PASS_OUTCOMES:
        return None
    return next((p for p in parts[1:] if PASS_NAME.match(p)), None)


def same_bug(one, other):
    """Whether two signatures are one bug whose message may have changed between releases.

    The same family is needed. Where the family names the failing pass, that is enough;
    without a pass, the messages must also be alike (:data:`SIMILAR`). One exception: a
    crash in the compile and a compiler error that are one failure reported two ways
    (:func:`reported_apart`)."""
    if family_of(one) != family_of(other):
        return reported_apart(one, other)
    if one == other or named_pass(one):
        return True
    return difflib.SequenceMatcher(None, message_of(one), message_of(other)).ratio() >= SIMILAR


def informative(key):
    """Whether a message key names its failure: at least two words that are not boilerplate."""
    return len({w.lower() for w in _WORD.findall(key)} - _BOILERPLATE) >= 2


def compile_failure_site(signature):
    """``(outcome, stage, pass)`` of a crash during the compile or of a compiler error
    (``None`` for any other signature); stage and pass are ``None`` where not named."""
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
    """Whether a compile crash and a compiler error (or two crashes, one naming its stage)
    are one failure reported two ways: Triton 3.0-3.2 run their passes without MLIR's crash
    recovery, so an assertion aborts (``crash:SIGABRT:compile: ...``) where 3.3 on report it
    as a failed pass (``compiler-error:ttgir:<pass>: ...``). One bug when the message keys are
    identical and informative and the stage and pass, where both name one, agree."""
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


# ---- engine ----


def build_launcher(kernel):
    """Load a compiled kernel's binary and build its launcher without launching it, where the
    release has the step on its own (``_init_handles``; older ones build at the first launch)."""
    if kernel is not None and hasattr(kernel, "_init_handles"):
        kernel._init_handles()
    return kernel


#: Options a release derives from the target and its own toolchain: captured on one release
#: they are wrong on another (a libdevice path, a PTX version), so a capture leaves them out.
DERIVED_OPTIONS = frozenset(
    {
        "arch",
        "backend_name",
        "extern_libs",
        "ptx_version",
        "supported_fp8_dtypes",
        "deprecated_fp8_dtypes",
        "allowed_dot_input_precisions",
        "max_num_imprecise_acc_default",
    }
)


def attrs_by_name(attrs, arg_names):
    """The specialization attrs of an ASTSource by argument name, from any release's form:
    a dict keyed by ``(index,)`` (3.3 on), or an AttrsDescriptor (``arg_properties`` in 3.2,
    ``divisible_by_16``/``equal_to_1`` in 3.0 and 3.1)."""
    found = {}
    if isinstance(attrs, dict):
        for key, props in attrs.items():
            index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
            if isinstance(index, int) and index < len(arg_names):
                found[arg_names[index]] = [list(p) for p in props]
        return found
    properties = dict(getattr(attrs, "arg_properties", None) or {})
    if not properties and attrs is not None:
        properties = {
            "tt.divisibility": sorted(getattr(attrs, "divisible_by_16", None) or ()),
            "tt.equal_to": sorted(getattr(attrs, "equal_to_1", None) or ()),
        }
    value = {"tt.divisibility": 16, "tt.equal_to": 1}
    for name, indices in properties.items():
        for index in indices:
            if isinstance(index, int) and index < len(arg_names) and name in value:
                found.setdefault(arg_names[index], []).append([name, value[name]])
    return found
