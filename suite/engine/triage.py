"""Name what broke: a documented rule (a user error), a compiler bug, a driver bug, or a gap.

:func:`triage` reads one :class:`~suite.engine.outcome.CaseResult` and answers with a
:class:`Triage`: a label, the rule for user errors, one line that says which values broke
the rule and what would satisfy it, and the documentation the rule comes from. Every rule
lives in one place in the project and is only read here:

- shared and tensor memory: ``suite.toolchain.limits`` (the numbers and their sources; the
  classifier
  already compared the compile's metadata with them and put ``resource``/``used``/``limit``
  in the result's detail);
- TMA descriptor rules (``box-dim-range``, ``global-stride-alignment``,
  ``global-address-alignment``, ``inner-box-bytes-multiple-of-16``, ``swizzle-span``, ...):
  ``suite.tma_model``; the copy rules ``buffer-overflow`` and ``tx-bytes-mismatch``:
  ``suite.static_check``. A refused case carries the rule in ``site.rule`` and the
  source in its error event; a CUDA case built with the check off records the rules it
  breaks in ``metrics["static_findings"]``;
- registers: ptxas's C7602 ("Insufficient registers"), with the per-thread limit of
  ``suite.toolchain.limits``;
- the architecture suffix: ptxas refusing ``wgmma``, ``setmaxnreg``,
  ``tensormap.replace``, ``tcgen05``... on ``.target 'sm_90'``/``'sm_100'`` (no ``a``).
  LLVM failing to select such an intrinsic is not one: Triton picks the ``a`` target
  itself, so that is its bug (#8473's ``tcgen05.wait.st`` on sm_103a).

A launch of a Triton reproducer that faulted or was wrong, whose ptxas differential
(``suite.engine.ptxas``: the same PTX relaunched with another ptxas build or at -O0) showed
that only the assembler changes the outcome, is ``ptxas-bug``: it goes to NVIDIA with the PTX.

Everything else that failed is a bug: in the compiler for Triton reproducers (and for
every compile-phase failure: compiler errors, ptxas errors other than C7602, crashes and
timeouts while compiling), in the driver for the CUDA reproducers (family ``cuda-tma``).
A harness error (a Python error of the suite or the reproducer's glue before Triton
compiled anything) is not a failure and has no triage: it is never a bug of anyone upstream.
A skip is not a failure, but a skip whose detail holds ``toolchain_gap`` (the bundled ptxas
does not know the target) is labelled ``toolchain-gap`` so that reports can say why.
``docs/reports.md`` has the table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any

from suite.cuda.model import DRIVER_API, MODEL_ONLY, PTX_ISA_URL
from suite.cuda.static_check import BUFFER_OVERFLOW, BUFFER_SOURCE, TX_BYTES_MISMATCH, TX_SOURCE
from suite.engine.outcome import TOOLCHAIN_GAP, CaseResult, Outcome
from suite.engine.protocol import EVENTS, NOT_STARTED, errors_in
from suite.engine.ptxas import AssemblerBlame
from suite.engine.signature import TRITON_REJECTS
from suite.engine.wire import parse_lines, read_lines
from suite.toolchain.limits import (
    PROGRAMMING_GUIDE,
    REGISTER_SOURCE,
    TMEM_SOURCE,
    UnknownTarget,
    limits_for,
)

__all__ = [
    "RULES",
    "TOOLCHAIN_GAP",
    "Rule",
    "Triage",
    "TriageKind",
    "failure_text",
    "triage_of",
]


class TriageKind(str, Enum):
    """Whose failure it is: a triage's label, or its first word (``user-error:<rule>``). A
    ``str`` so that ``results.jsonl`` and ``report.json`` keep the word as written."""

    COMPILER_BUG = "compiler-bug"
    DRIVER_BUG = "driver-bug"
    PTXAS_BUG = AssemblerBlame.ASSEMBLER.value  # "ptxas-bug"
    TOOLCHAIN_GAP = TOOLCHAIN_GAP  # the skip kind's word (suite.engine.outcome): not a failure
    USER_ERROR = "user-error"

    def __str__(self) -> str:
        return self.value


CUDA_FAMILY = "cuda-tma"

#: Registers per thread block on every target the suite knows (CUDA C++ Programming Guide,
#: the same table as the per-thread limit; 65536 measured on an H200, docs/limits-sources.md).
REGISTERS_PER_BLOCK = 65536

ARCH_SUFFIX_SOURCE = (
    "PTX ISA, 'PTX Module Directives: .target': architecture-specific features (wgmma, "
    "setmaxnreg, tensormap.replace, tcgen05, ...) need the 'a' target (sm_90a, sm_100a), which "
    f"is not forward compatible ({PTX_ISA_URL}#ptx-module-directives-target)"
)


@dataclass(frozen=True)
class Triage:
    """What one failing result is.

    ``kind`` is whose failure it is; ``rule`` is the rule id for user errors (None for the
    others); ``explanation`` is one line naming the rule, the values that broke it and what
    would satisfy it; ``source`` is the documentation section the rule comes from (empty for
    bugs).
    """

    kind: TriageKind
    rule: str | None
    explanation: str
    source: str

    @property
    def label(self) -> str:
        """The word ``results.jsonl``, ``report.json`` and the run table carry:
        ``compiler-bug``, ``driver-bug``, ``ptxas-bug``, ``toolchain-gap`` or
        ``user-error:<rule>``."""
        return str(self.kind) if self.rule is None else f"{self.kind}:{self.rule}"

    @property
    def is_bug(self) -> bool:
        return self.kind in (TriageKind.COMPILER_BUG, TriageKind.DRIVER_BUG, TriageKind.PTXAS_BUG)


@dataclass(frozen=True)
class Rule:
    """A row of the triage table (``docs/reports.md``): what is matched, and where from."""

    label: str
    matches: str
    source: str


RULES: tuple[Rule, ...] = (
    Rule(
        "user-error:shared-memory",
        "resource-limit with resource shared-memory (metadata.shared over the opt-in limit, "
        "or OutOfResources at launch)",
        PROGRAMMING_GUIDE,
    ),
    Rule("user-error:tensor-memory", "resource-limit with resource tensor-memory", TMEM_SOURCE),
    Rule(
        "user-error:registers",
        "ptxas-error C7602 'Insufficient registers'",
        REGISTER_SOURCE + "; 64K 32-bit registers per thread block",
    ),
    Rule(
        "user-error:<tma rule>",
        "user-error whose detail names a suite.tma_model rule (box-dim-range, "
        "global-stride-alignment, global-address-alignment, inner-box-bytes-multiple-of-16, "
        "swizzle-span, ...)",
        DRIVER_API,
    ),
    Rule(
        f"user-error:{BUFFER_OVERFLOW}",
        "user-error (static check): the box is larger than the shared buffer it lands in",
        BUFFER_SOURCE,
    ),
    Rule(
        f"user-error:{TX_BYTES_MISMATCH}",
        "user-error (static check): the mbarrier expects other bytes than the box holds",
        TX_SOURCE,
    ),
    Rule(
        "user-error:arch-suffix",
        "ptxas: an instruction 'not supported on .target sm_90/sm_100' (no 'a' suffix)",
        ARCH_SUFFIX_SOURCE,
    ),
    Rule(
        "user-error:<rule>",
        "runtime-error or wrong-result of a CUDA case built with the static check off whose "
        "compile recorded broken rules (metrics.static_findings)",
        DRIVER_API,
    ),
    Rule(
        TriageKind.COMPILER_BUG,
        "compiler-error; compiler-diagnostic (a compile that succeeded but printed an MLIR "
        "error); crash or timeout while compiling; ptxas-error other than C7602; "
        "runtime-error, wrong-result, crash or timeout of a Triton reproducer",
        "",
    ),
    Rule(
        TriageKind.PTXAS_BUG,
        "runtime-error, wrong-result or crash at launch of a Triton reproducer whose "
        "ptxas differential found that the same PTX assembled by another ptxas build (or at "
        "-O0) does not fail while the bundled build fails again",
        "",
    ),
    Rule(
        TriageKind.DRIVER_BUG,
        "runtime-error, wrong-result, crash or timeout after compiling, family cuda-tma",
        "",
    ),
    Rule(TriageKind.TOOLCHAIN_GAP, "skipped with detail toolchain_gap (not a failure)", ""),
)

_INSUFFICIENT = re.compile(r"Insufficient registers \((\d+)\)")
_REGISTER_TARGET = re.compile(r"register target of (\d+)")
_NOT_ON_TARGET = re.compile(
    r"(?:Instruction|Feature|Modifier|Directive)\s+'([^']+)'[^\n]*?"
    r"not supported on \.target '?(sm_(\d+))'?(?![\w])"
)
_SOURCE_LINE = re.compile(r"^source: (.+)$", re.MULTILINE)
_LAUNCH_SHARED = re.compile(r"Required: (\d+), Hardware limit: (\d+)")
_READ_LIMIT = 1 << 20


def triage_of(result: CaseResult, *, family: str | None = None) -> Triage | None:
    """The triage of ``result``; ``None`` when it is not a failure (nor a toolchain gap).

    ``family`` is the reproducer's family; by default it is looked up in the catalogue.
    """
    outcome = result.outcome
    if outcome is Outcome.SKIPPED:
        gap = result.facts.toolchain_gap
        if gap:
            return Triage(
                TriageKind.TOOLCHAIN_GAP,
                None,
                f"this Triton's bundled ptxas does not know {gap}: {result.message}",
                "",
            )
        return None
    if not outcome.is_failure:
        return None
    if outcome is Outcome.RESOURCE_LIMIT:
        return _resource(result)
    if outcome is Outcome.USER_ERROR or result.facts.exception == "LimitViolation":
        return _tma_rule(result)
    text = failure_text(result)
    if outcome is Outcome.PTXAS_ERROR and (
        result.site.ptxas_code == "C7602" or "Insufficient registers" in text
    ):
        return _registers(result, text)
    arch = _arch_suffix(result, text)
    if arch is not None:
        return arch
    phase = result.site.phase
    compile_phase = phase in (None, "compile", NOT_STARTED)
    if outcome in (Outcome.COMPILER_ERROR, Outcome.PTXAS_ERROR, Outcome.COMPILER_DIAGNOSTIC) or (
        compile_phase and outcome in (Outcome.CRASH, Outcome.TIMEOUT)
    ):
        return _compiler_bug(result)
    family = family if family is not None else reproducer_family(result)
    if family == CUDA_FAMILY:
        broken = _static_findings(result)
        if broken:
            return _recorded_rule(result, broken)
        return Triage(
            TriageKind.DRIVER_BUG,
            None,
            f"{result.outcome.label} after a clean static check in {phase}: {result.message}",
            "",
        )
    differential = result.notes.ptxas or {}
    if differential.get("verdict") == TriageKind.PTXAS_BUG:
        return Triage(
            TriageKind.PTXAS_BUG,
            None,
            f"{result.outcome.label} in {phase} that only the assembler changes: "
            f"{differential.get('reason', '')}: {result.message}",
            "",
        )
    return Triage(
        TriageKind.COMPILER_BUG,
        None,
        f"{result.outcome.label} in {phase} of code Triton generated: {result.message}",
        "",
    )


def annotate(result: CaseResult, *, family: str | None = None) -> CaseResult:
    """``result`` with its triage label and its one-line explanation, so that
    ``results.jsonl``, the run table and JUnit carry them."""
    found = triage_of(result, family=family)
    return replace(
        result,
        triage=found.label if found else "",
        triage_explanation=found.explanation if found else "",
    )


def reproducer_family(result: CaseResult) -> str:
    """The reproducer's family, from the catalogue (the spec of the case for user files)."""
    spec = result.artifacts.get("spec.json")
    if spec and Path(spec).is_file():
        try:
            source = json.loads(Path(spec).read_text()).get("source") or {}
        except (OSError, json.JSONDecodeError):
            source = {}
        if source:
            family = _family_from_source(json.dumps(source, sort_keys=True), result.repro)
            if family:
                return family
    return _catalogue_families().get(result.repro) or _guess_family(result)


@lru_cache(maxsize=64)
def _family_from_source(source: str, repro: str) -> str | None:
    from suite.engine.discover import from_source
    from suite.errors import UsageError

    try:
        found = from_source(json.loads(source), repro)
    except UsageError:
        return None
    return next((f.repro.family for f in found if f.repro.id == repro), None)


@lru_cache(maxsize=1)
def _catalogue_families() -> dict[str, str]:
    from suite.engine.discover import catalogue
    from suite.errors import UsageError

    try:
        return {f.repro.id: f.repro.family for f in catalogue()}
    except (UsageError, ImportError):
        return {}


def _guess_family(result: CaseResult) -> str:
    if result.repro.startswith("cuda-") or result.facts.exception == "CudaRunError":
        return CUDA_FAMILY
    return ""


def failure_text(result: CaseResult) -> str:
    """The result's message, its error event's message and its captured output, joined."""
    parts = [result.message]
    for name in (EVENTS, "stderr.txt", "stdout.txt"):
        path = result.artifacts.get(name)
        if not path or not Path(path).is_file():
            continue
        with open(path, errors="replace") as handle:
            text = handle.read(_READ_LIMIT)
        if name == EVENTS:
            parts += [e.message for e in errors_in(parse_lines(text))]
        else:
            parts.append(text)
    return "\n".join(p for p in parts if p)


def _user(rule: str, explanation: str, source: str) -> Triage:
    return Triage(TriageKind.USER_ERROR, rule, explanation, source)


def _resource(result: CaseResult) -> Triage:
    facts = result.facts
    resource = facts.resource or ""
    target = facts.limit_target or result.target
    used, limit = facts.used, facts.limit
    try:
        limits = limits_for(target)
    except UnknownTarget:
        limits = None
    config = _config_text(result.config)
    if resource == "tensor-memory" or "tensor" in resource:
        if used is not None and limit is not None:
            why = (
                f"tensor memory: {used} columns needed, the {target} limit is {limit} columns "
                f"per CTA; use at most {limit} (smaller BLOCK_M x BLOCK_N accumulators, fewer "
                f"buffered accumulators) ({config})"
            )
        else:
            why = f"tensor memory over the {target} limit: {result.message} ({config})"
        return _user("tensor-memory", why, TMEM_SOURCE)
    if "register" in resource:
        return _user(
            "registers",
            f"registers over the {target} limit at launch: {result.message} ({config})",
            REGISTER_SOURCE,
        )
    source = limits.shared_source if limits else PROGRAMMING_GUIDE
    at_launch = _LAUNCH_SHARED.search(result.message)
    if (used is None or limit is None) and at_launch:  # Triton's OutOfResources at launch
        used, limit = int(at_launch.group(1)), int(at_launch.group(2))
    if used is not None and limit is not None:
        why = (
            f"shared memory: {used} bytes needed, the {target} opt-in limit is {limit} bytes per "
            f"thread block ({used - limit} over); use fewer stages or smaller tiles so that it "
            f"needs at most {limit} ({config})"
        )
    else:
        limit_text = f" ({limits.shared_bytes} bytes)" if limits else ""
        why = (
            f"shared memory over the {target} opt-in limit{limit_text}: {result.message} ({config})"
        )
    return _user("shared-memory", why, source)


def _registers(result: CaseResult, text: str) -> Triage:
    warps = result.config.get("num_warps")
    available = _INSUFFICIENT.search(text)
    wanted = _REGISTER_TARGET.search(text)
    try:
        per_thread = limits_for(result.target).registers_per_thread
    except UnknownTarget:
        per_thread = 255
    config = _config_text(result.config)
    if isinstance(warps, int) and available and wanted:
        need = int(wanted.group(1))
        threads = warps * 32
        fits = [
            w for w in (1, 2, 4, 8, 16) if min(per_thread, REGISTERS_PER_BLOCK // (w * 32)) >= need
        ]
        fix = (
            f"num_warps <= {max(fits)}"
            if fits
            else f"a tile that needs at most {per_thread} registers per thread"
        )
        why = (
            f"ptxas C7602 Insufficient registers: the kernel needs at least {need} registers per "
            f"thread, but {warps} warps ({threads} threads) leave {available.group(1)} "
            f"({REGISTERS_PER_BLOCK} per block / {threads}, at most {per_thread} per thread); "
            f"use {fix}, or a smaller BLOCK_M x BLOCK_N accumulator ({config})"
        )
    else:
        why = (
            f"ptxas C7602 Insufficient registers: the kernel needs more than the "
            f"{per_thread} registers per thread ({REGISTERS_PER_BLOCK} per block) the target "
            f"gives; use fewer warps or a smaller accumulator tile ({config})"
        )
    return _user("registers", why, REGISTER_SOURCE + "; 64K 32-bit registers per thread block")


def _tma_rule(result: CaseResult) -> Triage:
    signature = result.signature.text if result.signature else ""
    message = result.message
    stage = result.site.stage or "compile"
    if message.startswith(f"{stage}: "):  # a refusal recorded before the user-error outcome
        message = message[len(stage) + 2 :]
    rule = str(result.site.rule or "")
    if not rule and result.outcome is Outcome.USER_ERROR:
        rule = signature.split(":", 1)[-1]
    rule = rule or message.split(":", 1)[0].strip() or "unknown"
    if message.startswith(rule + ":"):
        message = message[len(rule) + 1 :].strip()
    return _user(rule, f"{rule}: {message}", _source_of(result, rule))


def _source_of(result: CaseResult, rule: str) -> str:
    """The source the check named in its error event, else the rule's documentation."""
    for error in errors_in(read_lines(result.artifacts.get(EVENTS))):
        if error.type == "LimitViolation":
            found = _SOURCE_LINE.search(error.message)
            if found:
                return found.group(1).strip()
    return _rule_source(rule)


def _rule_source(rule: str) -> str:
    if rule == TRITON_REJECTS:
        return "Triton's own check of the kernel or its options (its message names the limit)"
    if rule == BUFFER_OVERFLOW:
        return BUFFER_SOURCE
    if rule == TX_BYTES_MISMATCH:
        return TX_SOURCE
    if rule == "array-length":
        return MODEL_ONLY
    return DRIVER_API


def _static_findings(result: CaseResult) -> list[str]:
    recorded = str(result.metrics.get("static_findings") or "")
    return [r for r in recorded.split(",") if r and r != "none"]


def _recorded_rule(result: CaseResult, broken: list[str]) -> Triage:
    rule = broken[0]
    others = f" (also {', '.join(broken[1:])})" if len(broken) > 1 else ""
    return _user(
        rule,
        f"{rule}: the case was built with the static check off and breaks this documented rule"
        f"{others}; the {result.outcome.label} is what the hardware does with it, not a driver "
        f"bug; run it with static_check=True for the values and the fix: {result.message}",
        _rule_source(rule),
    )


def _arch_suffix(result: CaseResult, text: str) -> Triage | None:
    if result.outcome not in (Outcome.PTXAS_ERROR, Outcome.COMPILER_ERROR, Outcome.CRASH):
        return None
    found = _NOT_ON_TARGET.search(text)
    if found is None or int(found.group(3)) < 90:
        return None
    feature, target = found.group(1), found.group(2)
    try:
        wanted = limits_for(target).ptxas_arch
    except UnknownTarget:
        wanted = target + "a"
    return _user(
        "arch-suffix",
        f"arch-suffix: '{feature}' is refused on .target '{target}': it is an "
        f"architecture-specific feature that exists only on '{wanted}'; compile for {wanted} "
        f"(nvcc -arch={wanted}, ptxas --gpu-name {wanted}) as Triton does",
        ARCH_SUFFIX_SOURCE,
    )


def _compiler_bug(result: CaseResult) -> Triage:
    site = result.site
    where = site.pass_name or site.stage or site.phase or "compile"
    if result.outcome is Outcome.PTXAS_ERROR:
        code = site.ptxas_code
        what = f"ptxas rejected the PTX Triton generated ({code or 'no code'}): {result.message}"
    elif result.outcome is Outcome.COMPILER_DIAGNOSTIC:
        what = f"the compile succeeded but printed an MLIR error: {result.facts.diagnostic or ''}"
    elif result.outcome is Outcome.COMPILER_ERROR:
        stage = site.stage or "compile"
        message = result.message.removeprefix(f"{stage}: ")
        if site.pass_name:
            what = f"the MLIR pass {site.pass_name} failed in the {stage} stage"
        else:
            what = f"the compile failed in the {stage} stage: {message}"
    else:
        what = f"{result.outcome.label} while compiling ({where}): {result.message}"
    return Triage(TriageKind.COMPILER_BUG, None, what, "")


def _config_text(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items())
