"""Sanitizer evidence: a launch that faulted or gave a wrong result, run once more under
``compute-sanitizer``, and its first error as a typed record.

A fault (``runtime-error``, or a crash of a launching case) is rerun under memcheck; a wrong
result under memcheck (an out-of-bounds read gives a wrong value without faulting), then
racecheck, then synccheck, until one reports an error. The first error block is parsed
(:func:`parse`): the kind (``Invalid __global__ write``, ``Misaligned shared or local
address``, a race, a barrier error), the access and its size, the address space, the kernel
with the SASS offset and the source line Triton's line info gives, the thread and block, and
what memcheck says about the address. Its ``category`` tells an out-of-bounds access from a
misaligned one, from a race, from a barrier error, and a wrong value with no memory error
(every tool clean) from all of them.

Where the Triton release has its own instrumentation (``TRITON_INSTRUMENTATION_MODE``:
``consan`` from 3.6.0, ``gsan`` from 3.8.0; 3.5.0 has ``TRITON_ENABLE_EXPERIMENTAL_CONSAN``
only; read in the release venvs' ``knobs.py`` and ``backends/nvidia/compiler.py``), the case
is also run with it and its outcome kept. Without ``compute-sanitizer`` on the PATH nothing
is rerun, and the record says so. Standard library only.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

_PREFIX = re.compile(r"^========= ?")
_ACCESS = re.compile(
    r"^Invalid (?:__(?P<space>\w+)__ )?(?P<access>read|write|atomic)\w*"
    r" of size (?P<size>\d+) bytes?"
)
_AT = re.compile(r"^at (?P<kernel>[^\s+]+)(?:\+(?P<pc>0x[0-9a-fA-F]+))?(?: in (?P<source>\S+))?")
_BY = re.compile(r"^by thread (?P<thread>\([\d,]+\)) in block (?P<block>\([\d,]+\))")
_ADDRESS = re.compile(r"^(?:Access to|Address) (?P<address>0x[0-9a-fA-F]+)")
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error|(\d+) hazards? displayed \((\d+) error")

#: Tools per failure: faults are memory errors; a wrong value may be a read out of bounds,
#: a race or a missing barrier.
TOOLS = {"fault": ("memcheck",), "wrong-result": ("memcheck", "racecheck", "synccheck")}
#: Triton's own instrumentation modes, the strings its NVIDIA backend checks for.
INSTRUMENTATION_MODES = ("consan", "gsan")


@dataclass(frozen=True)
class SanitizerError:
    """The first error one compute-sanitizer tool reported."""

    tool: str
    kind: str  # "Invalid __global__ write of size 2 bytes", "Misaligned shared or local address"
    access: str = ""  # read, write, atomic
    size: int | None = None  # bytes
    address_space: str = ""  # global, shared, local, "shared or local"
    kernel: str = ""
    pc: str = ""  # the SASS offset in the kernel: 0xcd0
    source: str = ""  # file:line from Triton's line info
    thread: str = ""
    block: str = ""
    address: str = ""
    detail: str = ""  # what the tool says about the address
    errors: int | None = None  # the tool's error count
    line: str = ""  # the error's first line, as printed

    @property
    def category(self) -> str:
        """``out-of-bounds``, ``misaligned``, ``race``, ``barrier`` or ``memory-error``."""
        text = f"{self.kind} {self.detail}".lower()
        if "misaligned" in text:
            return "misaligned"
        if "out of bounds" in text or self.access:
            return "out-of-bounds"
        if self.tool == "racecheck" or "race" in text or "hazard" in text:
            return "race"
        if self.tool == "synccheck" or "barrier" in text:
            return "barrier"
        return "memory-error"

    def summary(self) -> str:
        """One line: the kind, where, and what the address was."""
        where = f"{self.kernel}+{self.pc}" if self.pc else self.kernel
        at = f" at {where}" if where else ""
        source = f" ({self.source})" if self.source else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.tool}: {self.kind}{at}{source}{detail}"

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "category": self.category, "summary": self.summary()}


def _lines(text: str) -> list[str]:
    """The tool's own lines, prefix removed (the program's output is interleaved)."""
    return [_PREFIX.sub("", ln).rstrip() for ln in text.splitlines() if ln.startswith("=========")]


def parse(text: str, tool: str) -> SanitizerError | None:
    """The first error ``tool`` reported in ``text`` (its whole output), else None."""
    lines = _lines(text)
    errors = None
    for line in lines:
        found = _SUMMARY.search(line)
        if found:
            errors = int(found.group(1) or found.group(3))
    for start, line in enumerate(lines):
        if not line or line.startswith((" ", "COMPUTE-SANITIZER", "Program hit", "Target ")):
            continue
        if line.startswith(("ERROR SUMMARY", "RACECHECK SUMMARY", "Error: process")):
            continue
        block = [ln.strip() for ln in _block(lines[start + 1 :])]
        return _record(tool, line.strip(), block, errors)
    return None


def _block(lines: Sequence[str]) -> list[str]:
    """The indented lines of one error, up to its host backtrace."""
    kept = []
    for line in lines:
        if not line.startswith(" ") or "Saved host backtrace" in line:
            break
        kept.append(line)
    return kept


def _record(tool: str, head: str, block: list[str], errors: int | None) -> SanitizerError:
    fields: dict[str, str] = {}
    access = _ACCESS.match(head)
    if access:
        fields["access"] = access.group("access")
        fields["address_space"] = access.group("space") or ""
    elif "shared or local" in head.lower():
        fields["address_space"] = "shared or local"
    else:
        for space in ("global", "shared", "local"):
            if space in head.lower():
                fields["address_space"] = space
                break
    details = []
    for line in block:
        for pattern in (_AT, _BY, _ADDRESS):
            found = pattern.match(line)
            if found:
                fields.update({k: v for k, v in found.groupdict().items() if v})
                break
        if line.startswith(("Access to", "Address", "and is")) or "out of bounds" in line:
            details.append(line)
    return SanitizerError(
        tool=tool,
        kind=head,
        access=fields.get("access", ""),
        size=int(access.group("size")) if access else None,
        address_space=fields.get("address_space", ""),
        kernel=fields.get("kernel", ""),
        pc=fields.get("pc", ""),
        source=fields.get("source", ""),
        thread=fields.get("thread", ""),
        block=fields.get("block", ""),
        address=fields.get("address", ""),
        detail=" ".join(details),
        errors=errors,
        line=head,
    )


@dataclass(frozen=True)
class Evidence:
    """What the sanitizers said about one failing launch."""

    available: bool  # compute-sanitizer was found
    tools: tuple[str, ...]  # the tools run, in order
    first: SanitizerError | None  # the first error, of the first tool that found one
    outputs: dict[str, str]  # tool -> the file its whole output went to
    instrumentation: dict[str, str]  # Triton mode -> the rerun's outcome and first line
    note: str = ""

    @property
    def category(self) -> str:
        """The error's category; ``no-memory-error`` when every tool ran clean."""
        if self.first:
            return self.first.category
        return "no-memory-error" if self.tools else ""

    def to_json(self) -> dict[str, object]:
        return {
            "available": self.available,
            "tools": list(self.tools),
            "first": self.first.to_json() if self.first else None,
            "category": self.category,
            "outputs": self.outputs,
            "instrumentation": self.instrumentation,
            "note": self.note,
        }


def executable() -> str | None:
    """``compute-sanitizer`` on the PATH, or where CUDA keeps it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for folder in ("/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer"):
        candidate = Path(folder) / "compute-sanitizer"
        if candidate.is_file():
            return str(candidate)
    return None


def instrumentation_modes(python: str) -> tuple[str, ...]:
    """The ``TRITON_INSTRUMENTATION_MODE`` values ``python``'s Triton knows, read from its
    sources (nothing is imported into this process)."""
    probe = subprocess.run(
        [python, "-c", "import triton, os; print(os.path.dirname(triton.__file__))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    root = Path(probe.stdout.strip()) if probe.returncode == 0 else None
    if root is None or not (root / "knobs.py").is_file():
        return ()
    if "TRITON_INSTRUMENTATION_MODE" not in (root / "knobs.py").read_text(errors="replace"):
        return ()
    backend = root / "backends" / "nvidia" / "compiler.py"
    text = backend.read_text(errors="replace") if backend.is_file() else ""
    return tuple(m for m in INSTRUMENTATION_MODES if f'"{m}"' in text)


#: Runs the case's launch again: (argv prefix, more environment, where its output goes)
#: -> (exit status, its whole output). The runner supplies it, with the case's isolation.
Rerun = Callable[[Sequence[str], Mapping[str, str], Path], tuple[int | None, str]]


def gather(failure: str, python: str, folder: Path, rerun: Rerun) -> Evidence:
    """Rerun a failing launch (``failure``: ``fault`` or ``wrong-result``) under the tools
    for it, and under Triton's own instrumentation where the release has it."""
    sanitizer = executable()
    tools: list[str] = []
    outputs: dict[str, str] = {}
    first = None
    note = ""
    if sanitizer is None:
        note = "compute-sanitizer is not installed: no sanitizer evidence"
    else:
        for tool in TOOLS[failure]:
            output = folder / f"sanitizer-{tool}.txt"
            prefix = [sanitizer, "--tool", tool, "--print-limit", "10"]
            _, text = rerun(prefix, {}, output)
            tools.append(tool)
            outputs[tool] = str(output)
            first = parse(text, tool)
            if first:
                break
    modes: dict[str, str] = {}
    for mode in instrumentation_modes(python):
        output = folder / f"instrumentation-{mode}.txt"
        status, text = rerun([], {"TRITON_INSTRUMENTATION_MODE": mode}, output)
        said = next((ln for ln in text.splitlines() if "error" in ln.lower()), "")
        modes[mode] = f"exit {status}: " + (said.strip()[:300] if said else "no error reported")
    return Evidence(sanitizer is not None, tuple(tools), first, outputs, modes, note)


def main(argv: Sequence[str]) -> int:
    """``python -m suite.engine.sanitizer TOOL FILE``: the first error of a saved output."""
    tool, path = argv
    found = parse(Path(path).read_text(errors="replace"), tool)
    print(json.dumps(found.to_json() if found else None, indent=2))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
