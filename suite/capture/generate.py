"""From capture records to failures (with the signature the program showed) and from a
failure to an ordinary reproducer file, rendered from ``templates/captured_repro.py.j2``."""

from __future__ import annotations

import ast
import hashlib
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.capture.program import ProgramRun, stderr_between
from suite.capture.site.repro_capture_records import (
    DONE,
    STARTED,
    TEMPLATE_IMPORTS,
    CompileRecord,
    ErrorFacts,
    KernelSource,
    LaunchRecord,
    TargetFacts,
    load_compile,
    load_last_launches,
    load_launch,
    load_uncaught,
    read_bounded,
)
from suite.engine import Error, exception_facts
from suite.engine import signature as signatures
from suite.judgement import DERIVED_OPTIONS, STAGE_FUNCTIONS, as_tuples
from suite.standalone_kit import CAPTURED_LAUNCH_KIT, COMPILE_KIT, hang_after_s
from suite.templating import template_environment
from suite.tritonc import ast_attrs, specialization

CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
DEFAULT_OPTIONS = {"num_warps": 4, "num_stages": 3}  # the CUDA backend's, when none was given
BLOCK_NAME = re.compile(r"BLOCK|TILE|GROUP_SIZE", re.IGNORECASE)
TL_ATTRIBUTE = re.compile(r"\btl\.(\w+)")
TORCH_TYPES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}
INT32 = range(-(2**31), 2**31)


@dataclass
class Failure:
    """One failure the program showed: its record and the signature it had there."""

    phase: str  # compile or launch
    path: Path
    kernel: KernelSource
    signature: str
    message: str
    compile: CompileRecord | None = None
    launch: LaunchRecord | None = None
    handled_by: str = ""
    duplicates: list[Path] = field(default_factory=list)  # records of the same signature
    deferred: bool = False  # a launch whose failure surfaced later (the process's last one)
    refused: bool = False  # Triton's frontend refused the kernel: the release, not a bug

    @property
    def target(self) -> str:
        record = self.compile or self.launch
        assert record is not None
        return target_name(record.target)

    @property
    def python(self) -> str:
        record = self.compile or self.launch
        assert record is not None
        return record.python

    @property
    def triton(self) -> str:
        record = self.compile or self.launch
        assert record is not None
        return record.triton


def target_name(target: TargetFacts) -> str:
    """``sm_<arch>`` for a CUDA target, '' for anything else (not reproducible here)."""
    arch = target.get("arch")
    if target.get("backend") == "cuda" and isinstance(arch, int):
        return f"sm_{arch}"
    return ""


def compiled_kernels(folder: Path) -> list[Failure]:
    """With ``--all``: the first successful compile of each kernel, for each target, as a
    subject to render (its signature empty: it did not fail)."""
    found: dict[tuple[str, str, str], Failure] = {}
    for path in sorted((folder / "compiles").glob("*.json"), key=lambda p: p.stat().st_mtime):
        record = load_compile(path)
        key = (record.kernel.file, record.kernel.name, target_name(record.target))
        if record.state == DONE and key[2] and key not in found:
            found[key] = Failure("compile", path, record.kernel, "", "compiled", compile=record)
    return list(found.values())


def captured_config(failure: Failure) -> Config:
    """The config of the ``captured`` set that :func:`render` writes for ``failure``."""
    context = _context(failure)
    return _space(context.constexprs, context.options, [])[0]


def failures(folder: Path, program: ProgramRun) -> list[Failure]:
    """The failures of the program, one per signature (the first record of each)."""
    found: list[Failure] = []
    for path in sorted((folder / "compiles").glob("*.json"), key=lambda p: p.stat().st_mtime):
        record = load_compile(path)
        if record.state != DONE:
            found.append(_compile_failure(path, record, folder, program))
    for path in sorted((folder / "launches").glob("*.json"), key=lambda p: p.stat().st_mtime):
        launch = load_launch(path)
        verdict = _judged(launch.error, "", "launch", None)
        found.append(
            Failure(
                "launch",
                path,
                launch.kernel,
                verdict.signature or "",
                verdict.message,
                launch=launch,
                handled_by=launch.handled_by,
            )
        )
    found.extend(surfaced_later(folder, program, found))
    distinct: dict[tuple[str, str], Failure] = {}
    for failure in found:
        first = distinct.setdefault((failure.handled_by, failure.signature), failure)
        if first is not failure:
            first.duplicates.append(failure.path)
    return list(distinct.values())


def surfaced_later(folder: Path, program: ProgramRun, found: list[Failure]) -> list[Failure]:
    """Failures reported after their launch: a process whose last event was a launch (its
    write-ahead record, in ``last-launch/``) and which then ended with an uncaught
    exception (``uncaught/<pid>.json``) or, for the program's own process, by a signal.
    The failure is tied to that launch; whether the launch alone fails that way is what
    the isolated run of its reproducer says."""
    explained: dict[int, int] = {}  # pid -> the sequence of its latest failure record
    for failure in found:
        record = failure.compile or failure.launch
        assert record is not None
        explained[record.pid] = max(explained.get(record.pid, -1), record.sequence)
    later = []
    for path, launch in load_last_launches(folder / "last-launch").values():
        if explained.get(launch.pid, -1) >= launch.sequence:
            continue  # a compile or launch failure came after it: that one is the failure
        uncaught_path = folder / "uncaught" / f"{launch.pid}.json"
        verdict: signatures.SignatureParts | None
        if uncaught_path.exists():
            uncaught = load_uncaught(uncaught_path)
            if uncaught.sequence < launch.sequence:
                continue
            launch.error = uncaught.error
            verdict = _judged(uncaught.error, "", "launch", None)
        elif launch.pid == program.pid and program.signal_name:
            verdict = signatures.classify_ending(
                None,
                stderr=stderr_between(folder, launch.stderr_start, None),
                phase="launch",
                returncode=program.returncode,
                signal_name=None if program.timed_out else program.signal_name,
                timed_out=program.timed_out,
                done=False,
            )
            assert verdict is not None
        else:
            continue
        signature = verdict.signature or ""
        later.append(
            Failure(
                "launch",
                path,
                launch.kernel,
                signature,
                verdict.message,
                launch=launch,
                deferred=True,
            )
        )
    return later


def _compile_failure(
    path: Path, record: CompileRecord, folder: Path, program: ProgramRun
) -> Failure:
    stderr = compile_stderr(record)
    if record.state == STARTED:
        # The process died inside the compile: by a signal we saw only for our own child.
        ours = record.pid == program.pid
        timed_out = ours and program.timed_out  # killed by the program's --timeout
        verdict = signatures.classify_ending(
            None,
            stderr=stderr,
            phase="compile",
            returncode=program.returncode if ours else None,
            signal_name=program.signal_name if ours and not timed_out else None,
            timed_out=timed_out,
            done=False,
        )
    else:
        verdict = _judged(record.error, stderr, "compile", record)
    assert verdict is not None
    return Failure(
        "compile",
        path,
        record.kernel,
        verdict.signature or "",
        verdict.message,
        compile=record,
        handled_by=record.handled_by,
        refused=verdict.refused,
    )


def compile_stderr(record: CompileRecord) -> str:
    """What the compile wrote on fd 2 of its process, teed by the hook: from the record,
    or, for a process that died inside the compile, from the log it went to."""
    output = record.output
    if output is None:
        return ""
    if output.complete or not output.stderr_log:
        return output.stderr
    try:
        return read_bounded(output.stderr_log, output.stderr_from, None)[0]
    except OSError:
        return ""


def _judged(
    error: ErrorFacts | None, stderr: str, phase: str, record: CompileRecord | None
) -> signatures.SignatureParts:
    facts = error or ErrorFacts("", "", "", "", [], "")
    described = Error(
        phase=phase,
        type=facts.type,
        qualname=facts.qualname,
        message=facts.message,
        cause=facts.cause,
        stage=exception_facts.stage_of(facts.frames),
        compiling=phase == "compile",  # the hook wraps the compile entry point itself
        origin=exception_facts.origin_of(facts.frames, phase == "compile").value,
        traceback=facts.traceback,
    )
    verdict = signatures.classify_ending(
        described,
        stderr=stderr,
        phase=phase,
        returncode=None,
        signal_name=None,
        timed_out=False,
        done=True,
    )
    assert verdict is not None
    return verdict


SAME = "the same signature"


def confirmation(observed: str, isolated: str | None, deferred: bool = False) -> str:
    """On what evidence the isolated run confirms the program's failure ('' when it does
    not). The same signature confirms it. A crash or a timeout in the program may show
    less than the isolated child does: no compile stage (the program has no faulthandler
    dump), no signal (a process that was not the program's own: ``exit-None``), no message
    (it died with nothing written). Such an observation is consistent with an isolated
    failure of the same outcome whose family holds every part it does show and whose
    message is the same, where it has one; the evidence says what was not shown.

    ``deferred``: the program's failure surfaced after its last launch. A fault on the GPU
    is sticky: the next CUDA call the process makes reports it, whichever call that is
    (cuBLAS's handle creation, a copy, a synchronize) and in its own words. So any CUDA
    error the program showed there is consistent with a fault of the launch in isolation,
    where the launch is synchronized at once and its own error shows."""
    if isolated is None:
        return ""
    if observed == isolated:
        return SAME
    if deferred and _cuda_error(observed) and _launch_fault(isolated):
        return (
            f"consistent: the program showed {observed} at a CUDA call after its last launch"
            f" of the kernel (a GPU fault is reported by the next CUDA call, in that call's"
            f" words); the isolated run, synchronized right after the launch, failed with"
            f" {isolated}"
        )
    if not observed.startswith(("crash:", "timeout:")):
        return ""
    seen = signatures.family_of(observed).split(":")
    known = signatures.family_of(isolated).split(":")
    message = signatures.message_of(observed)
    if seen[0] != known[0] or (message and message != signatures.message_of(isolated)):
        return ""
    if not all(part in known[1:] or part == UNKNOWN_END for part in seen[1:]):
        return ""
    stages = set(STAGE_FUNCTIONS.values())
    missing = []
    if UNKNOWN_END in seen:
        missing.append("how its process ended (not the program's own process)")
    if not message:
        missing.append("a message (nothing was written)")
    if any(p in stages for p in known) and not any(p in stages for p in seen):
        missing.append("the compile stage (no faulthandler dump)")
    hidden = "; ".join(missing) or "nothing"
    return (
        f"consistent: the program showed {observed}, which does not show {hidden}; "
        f"the isolated run failed in the {_phase(observed)} with {isolated}"
    )


# A crash of a process that was not the program's own: its signal is not known.
UNKNOWN_END = "exit-None"

# What a CUDA call says of a fault on the GPU: the runtime's and driver's words, and those of
# the libraries that wrap them (cuBLAS, cuDNN) when theirs is the call that meets it.
CUDA_ERROR = re.compile(
    r"CUDA error|CUDA_ERROR_|cudaError|CUBLAS_STATUS_|CUDNN_STATUS_|illegal memory access"
    r"|unspecified launch failure|misaligned address|illegal instruction"
)


def _cuda_error(signature: str) -> bool:
    return signature.startswith(("runtime-error:", "crash:")) and bool(CUDA_ERROR.search(signature))


def _launch_fault(signature: str) -> bool:
    """A fault of the launch itself: a CUDA error in the launch phase, or a crash there."""
    parts = signatures.family_of(signature).split(":")
    if "launch" not in parts:
        return False
    return signature.startswith("crash:") or _cuda_error(signature)


def _phase(signature: str) -> str:
    parts = signatures.family_of(signature).split(":")
    return "launch" if "launch" in parts else "compile"


# ---------------------------------------------------------------------------------------
# Rendering.
# ---------------------------------------------------------------------------------------


def reproducer_id(failure: Failure) -> str:
    """``captured-<kernel>-<digest of the signature>`` (of where it was defined, when it
    did not fail)."""
    what = failure.signature or f"{failure.kernel.file}:{failure.kernel.line}:{failure.target}"
    digest = hashlib.sha256(what.encode()).hexdigest()[:8]
    name = re.sub(r"[^a-z0-9]+", "-", failure.kernel.name.lower()).strip("-")
    return f"captured-{name}-{digest}"


def render(
    failure: Failure,
    also: Sequence[Mapping[str, object]] | None = None,
    expected: str | None = None,
) -> str:
    """The reproducer file's text for ``failure`` (a kernel that compiled, with ``--all``);
    ``also`` are configs its parameter domains must hold (its autotuner's); ``expected``: the
    signature it exits 1 on when run by itself (by default the one the program showed)."""
    context = _context(failure)
    spec = specialization(
        context.signature,
        context.divisible,
        context.equal_to_1,
        context.attrs,
        arguments={*context.signature, *context.constexprs, *context.equal_to_1},
    )
    ones, attrs = ast_attrs(spec)
    record = failure.compile or failure.launch
    assert record is not None
    kernel = failure.kernel
    program = shlex.join(record.argv) or "?"
    config, params = _space(context.constexprs, context.options, also or [])
    fixed = {n: v for n, v in context.constexprs.items() if n not in config}
    texts = "\n".join(f.text for f in kernel.functions)
    requires = sorted({f"triton.language.{name}" for name in TL_ATTRIBUTE.findall(texts)})
    if any(line.module.split(".")[0] == "torch" for line in kernel.imports) or failure.launch:
        requires.insert(0, "torch")  # torch's runtime helpers, or the launch's tensors
    what = f"{failure.phase} failure" if failure.signature else "a kernel that compiled"
    if failure.deferred:
        what = "failure reported after the launch"
    references = [f"program: {program}", f"kernel: {kernel.file}:{kernel.line}"]
    if record.called_from:
        references.append(f"{failure.phase} reached from: {record.called_from}")
    values = {
        "title": f"{kernel.name}: {what} captured from `{program}`",
        "program": program,
        "kernel": kernel,
        "phase": failure.phase,
        "called_from": record.called_from,
        "triton": record.triton,
        "target": failure.target,
        "observed": failure.signature or "compiled without error",
        "problems": [*record.problems, *(f"global {u}" for u in kernel.unresolved)],
        "imports": [i for i in kernel.imports if (i.name, i.module) not in TEMPLATE_IMPORTS],
        "repro_id": reproducer_id(failure),
        "references": references,
        "params": params,
        "config": config,
        "requires": requires,
        "gpu": "optional",
        "values": kernel.values,
        "functions": kernel.functions,
        "function_names": {f.name for f in kernel.functions},
        "signature": context.signature,
        "param_constexprs": [n for n in config if n not in CONFIG_OPTIONS],
        "fixed_constexprs": fixed,
        "equal_to_1": ones,
        "attrs": attrs,
        "options": as_tuples(context.other_options),
        "launch": context.launch,
        "deferred": failure.deferred,
        "arch": int(failure.target.removeprefix("sm_").rstrip("af")),
        # What running the file by itself judges with (templates/standalone_check.py.j2).
        "expected": failure.signature if expected is None else expected,
        "launches": context.launch is not None,
        "kit": CAPTURED_LAUNCH_KIT if context.launch is not None else COMPILE_KIT,
        "timeout_s": hang_after_s(),
    }
    return template_environment().get_template("captured_repro.py.j2").render(**values)


@dataclass(frozen=True)
class CapturedLaunch:
    """The launch a reproducer of a launch failure makes: its grid and the arguments' shapes."""

    grid: tuple[int, ...]
    tensors: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]]  # dtype, shape, strides
    scalars: dict[str, object]


@dataclass(frozen=True)
class Specialized:
    """What a reproducer compiles: the kernel's specialization and its options, from a
    compile record or from what the JIT would have made of a launch."""

    signature: dict[str, str]
    constexprs: dict[str, str]
    divisible: list[str]
    equal_to_1: list[str]
    attrs: dict[str, list[tuple[Any, ...]]]
    options: dict[str, object]  # the config's: num_warps, num_stages, num_ctas, maxnreg
    other_options: dict[str, object]
    launch: CapturedLaunch | None = None


def _context(failure: Failure) -> Specialized:
    if failure.compile is not None:
        return _from_compile(failure.compile)
    return _from_launch(failure.launch)


def _from_compile(record: CompileRecord | None) -> Specialized:
    assert record is not None
    return Specialized(
        signature=record.signature,
        constexprs=record.constexprs,
        divisible=record.divisible,
        equal_to_1=record.equal_to_1,
        attrs={n: [tuple(pair) for pair in pairs] for n, pairs in record.attrs.items()},
        options=_config_options(record.options),
        other_options=_other_options(record.options),
    )


def _from_launch(record: LaunchRecord | None) -> Specialized:
    """What the JIT would have compiled for this launch: types from the arguments, the
    specialization ``kernel[grid](...)`` gives aligned tensors and integers."""
    assert record is not None
    signature: dict[str, str] = {}
    divisible: list[str] = []
    equal_to_1: list[str] = []
    for name in record.arguments:
        if name in record.tensors:
            signature[name] = "*" + TORCH_TYPES.get(record.tensors[name].dtype, "fp32")
            divisible.append(name)
        elif name in record.scalars:
            value = record.scalars[name]
            if isinstance(value, bool):
                signature[name] = "i1"
            elif isinstance(value, int):
                if value == 1:
                    equal_to_1.append(name)
                signature[name] = "i32" if value in INT32 else "i64"
                if value % 16 == 0:
                    divisible.append(name)
            elif isinstance(value, float):
                signature[name] = "fp32"
    launch = CapturedLaunch(
        grid=tuple(record.grid),
        tensors={n: (t.dtype, tuple(t.shape), tuple(t.strides)) for n, t in record.tensors.items()},
        scalars={n: v for n, v in record.scalars.items() if n in signature},
    )
    return Specialized(
        signature=signature,
        constexprs=record.constexprs,
        divisible=divisible,
        equal_to_1=equal_to_1,
        attrs={},
        options=_config_options(record.options),
        other_options=_other_options(record.options),
        launch=launch,
    )


def _config_options(options: dict[str, object]) -> dict[str, object]:
    chosen = {**DEFAULT_OPTIONS, **{k: options[k] for k in CONFIG_OPTIONS if k in options}}
    if chosen.get("num_ctas") == 1:
        del chosen["num_ctas"]
    if chosen.get("maxnreg") is None:
        chosen.pop("maxnreg", None)
    return chosen


def _other_options(options: dict[str, object]) -> dict[str, object]:
    return {
        k: v for k, v in options.items() if k not in CONFIG_OPTIONS and k not in DERIVED_OPTIONS
    }


def _space(
    constexprs: dict[str, str], options: dict[str, object], also: Sequence[Mapping[str, object]]
) -> tuple[Config, list[tuple[str, tuple[Any, ...]]]]:
    """The captured config and the parameters around it, each as its values.

    Block sizes (powers of two named like one) get the powers of two through the captured
    value, other integers and booleans it and its neighbours; the compile options the values
    around theirs; each domain also holds the values of ``also`` (an autotuner's configs).
    Other constexprs stay fixed.
    """
    config: Config = {}
    for name, literal in constexprs.items():
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (bool, int)):
            config[name] = value
    config["num_warps"] = options["num_warps"]
    config["num_stages"] = options["num_stages"]
    for name in ("num_ctas", "maxnreg"):
        if name in options:
            config[name] = options[name]
    params = [
        _domain(name, value, {c[name] for c in also if name in c}) for name, value in config.items()
    ]
    return config, params


def _domain(name: str, value: Any, seen: set[Any]) -> tuple[str, tuple[Any, ...]]:
    """``name``'s values, smallest first: a power-of-two range for a block size, else the
    value and its neighbours."""
    if isinstance(value, bool):
        return name, (False, True)
    values = {value, *seen}
    if name == "num_warps":
        values |= {max(1, value // 2), value * 2}
    elif name == "num_stages":
        values |= {1, max(1, value - 1), value + 1}
    elif name in ("num_ctas", "maxnreg"):
        pass
    elif all(v > 0 and v & (v - 1) == 0 for v in values) and BLOCK_NAME.search(name):
        low, high = min(max(min(value, 16), value // 4), *values), max(value * 2, *values)
        return name, tuple(1 << bit for bit in range(low.bit_length() - 1, high.bit_length()))
    else:
        values |= {value - 1, value + 1}
    return name, tuple(sorted(values))
