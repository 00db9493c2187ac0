"""The ptxas differential: is a failing launch the assembler's bug?

A wrong value or a fault at launch may come from one of Triton's passes, from LLVM's NVPTX
backend, or from ptxas. This step relaunches the failing case with the same PTX assembled
differently and compares the outcomes:

- ``bundled``: the ptxas the case's Triton uses for the target (its own ``bin/ptxas``, or
  ``bin/ptxas-blackwell`` for the targets it hands to that one), as the case ran: the
  failure must show again, and this run gives the PTX the others are compared with;
- ``second``: another ptxas build of another version (the CUDA toolkit's: on the PATH,
  under ``CUDA_HOME`` / ``CUDA_PATH`` or ``/usr/local/cuda``), picked through the
  knobs Triton reads (``TRITON_PTXAS_PATH``; ``TRITON_PTXAS_BLACKWELL_PATH`` from the
  releases that have it; both are set, and the release reads the one it uses);
- ``bundled-O0``: the bundled ptxas with its optimisations off, where the release has the
  ``DISABLE_PTXAS_OPT`` knob (read in its ``knobs.py``; it adds ``--opt-level 0``).

Each relaunch compiles into a cache folder of its own, kept with the case: the PTX and the
cubin each ptxas produced stay beside the outcome. Triton rewrites the PTX's ``.version``
line for the ptxas it finds, so two PTX files are the same PTX when they agree but for
that line; where they differ more, the assembler was not the only thing that changed and
that relaunch decides nothing.

:func:`decide` reads the outcomes: the assembler's bug (``ptxas-bug``) when the bundled
build fails again and a build given the same PTX does not; not the assembler's when every
build fails the same way; undecided otherwise, with the reason. Without a second ptxas or
the knob, the evidence says so. Standard library only.
"""

from __future__ import annotations

import difflib
import enum
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from suite.children import Role, child_argv
from suite.engine.shim import child_env

_VERSION = re.compile(r"\bV(\d+\.\d+\.\d+)")
_PTX_VERSION_LINE = re.compile(r"^\s*\.version\s+\d+\.\d+\s*$", re.MULTILINE)
# One SASS instruction as cuobjdump prints it: /*0a40*/  IMAD.SHL.U32 R189, R155, 0x80, RZ ;
_SASS = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(\S.*?)\s*;")
#: The knobs through which a Triton release picks its ptxas (``knobs.nvidia``: ``ptxas``
#: for every target before 3.7, ``ptxas-blackwell`` for sm_100 and later from the releases
#: that bundle it, for sm_90 too from 3.9).
PATH_KNOBS = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH")
#: Triton's knob for ``--opt-level 0`` (``knobs.nvidia.disable_ptxas_opt``).
NO_OPT_KNOB = "DISABLE_PTXAS_OPT"
#: Where a CUDA toolkit keeps its ptxas, besides the PATH.
TOOLKIT_ROOTS = ("CUDA_HOME", "CUDA_PATH")
DEFAULT_TOOLKIT = "/usr/local/cuda"
#: What the probe child prints for a CUDA release whose ptxas the case's Triton compiles with.
TAKES = "takes"


@dataclass(frozen=True)
class Ptxas:
    """One ptxas build: where it is and the release it reports (``12.8.93``)."""

    path: str
    version: str

    @property
    def cuda(self) -> str:
        """The CUDA release it belongs to (``13.0``), which Triton reads its PTX ISA from."""
        return ".".join(self.version.split(".")[:2])

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> Ptxas | None:
        """The build at ``path``, or None when it is not a ptxas that runs."""
        try:
            found = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.SubprocessError):
            return None
        version = _VERSION.search(found.stdout)
        if found.returncode != 0 or version is None:
            return None
        return cls(str(Path(path).resolve()), version.group(1))


def bundled_ptxas(arch):
    """The ptxas the installed release assembles ``arch`` with
    (:func:`suite.toolchain.probe.ptxas_for`) and whether it reads ``DISABLE_PTXAS_OPT``."""
    import triton
    from triton.backends.nvidia import compiler

    from suite.toolchain.probe import ptxas_for

    knobs = os.path.join(os.path.dirname(triton.__file__), "knobs.py")
    text = ""
    if os.path.isfile(knobs):
        with open(knobs) as handle:
            text = handle.read()
    return ptxas_for(compiler, arch), "DISABLE_PTXAS_OPT" in text


def ptxas_refusal(cuda):
    """'' when the installed release compiles with a ptxas of CUDA ``cuda`` (``13.0``), else
    its error: it reads the PTX ISA from that release (``ptx_get_version``), and releases
    before 3.5 know no CUDA 13 ("Triton only support CUDA 10.0 or higher")."""
    from triton.backends.nvidia import compiler

    try:
        compiler.ptx_get_version(cuda)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def print_bundled(argv: Sequence[str]) -> int:
    """The ``ptxas-probe`` child, run by the case's interpreter: ``ARCH [CUDA ...]``; prints
    the path of the ptxas its Triton uses for ``ARCH``, then whether it has the
    no-optimisation knob (:func:`bundled_ptxas`), then for each CUDA release given
    (``13.0``) ``takes`` or why the release refuses a ptxas of it (:func:`ptxas_refusal`),
    one line each."""
    arch, *releases = argv
    print(*bundled_ptxas(int(arch)), sep="\n")
    for cuda in releases:
        print(ptxas_refusal(cuda).replace("\n", " ") or TAKES)
    return 0


@dataclass(frozen=True)
class Toolchain:
    """The ptxas builds the differential can use for one interpreter and target."""

    bundled: Ptxas | None
    second: Ptxas | None
    no_opt_knob: bool  # the release reads DISABLE_PTXAS_OPT
    note: str = ""


def toolchain(python: str, arch: int, environ: Mapping[str, str] | None = None) -> Toolchain:
    """The bundled ptxas of ``python``'s Triton for ``arch``, a second build of another
    version, and whether the release has the no-optimisation knob."""
    environ = os.environ if environ is None else environ
    probe_env = child_env(base={k: v for k, v in environ.items() if k not in PATH_KNOBS})
    releases = sorted({b.cuda for b in builds_around(environ)})
    try:
        probe = subprocess.run(
            child_argv(python, Role.PTXAS_PROBE, str(arch), *releases),
            capture_output=True,
            text=True,
            timeout=120,
            env=probe_env,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Toolchain(None, None, False, f"the interpreter's Triton was not read: {exc}")
    lines = probe.stdout.strip().splitlines()
    if probe.returncode != 0 or len(lines) < 2 + len(releases):
        why = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return Toolchain(None, None, False, f"the interpreter's Triton names no ptxas: {why}")
    said = lines[len(lines) - len(releases) :]
    path, knob = lines[len(lines) - len(releases) - 2 : len(lines) - len(releases)]
    refused = {cuda: why for cuda, why in zip(releases, said, strict=True) if why != TAKES}
    bundled = Ptxas.at(path)
    if bundled is None:
        return Toolchain(None, None, False, f"{path} is not a ptxas that runs")
    second = second_build(bundled, environ, refused)
    note = "" if second else no_second_note(bundled, environ, refused)
    return Toolchain(bundled, second, knob == "True", note)


def candidates(environ: Mapping[str, str]) -> list[Path]:
    """Where another ptxas may be, in order: the PATH, the toolkit roots, /usr/local/cuda."""
    found = shutil.which("ptxas", path=environ.get("PATH"))
    places = [Path(found)] if found else []
    roots = [environ.get(name, "") for name in TOOLKIT_ROOTS] + [DEFAULT_TOOLKIT]
    places += [Path(root) / "bin" / "ptxas" for root in roots if root]
    return places


def builds_around(environ: Mapping[str, str]) -> list[Ptxas]:
    """The ptxas builds that run among :func:`candidates`, in their order."""
    found = (Ptxas.at(place) for place in candidates(environ) if place.is_file())
    return [build for build in found if build is not None]


def second_build(
    bundled: Ptxas, environ: Mapping[str, str], refused: Mapping[str, str] | None = None
) -> Ptxas | None:
    """The first ptxas found that is not ``bundled``, reports another version (the same
    version assembles the same way: it would decide nothing) and is of a CUDA release the
    case's Triton does not refuse (``refused``: CUDA release -> why; its relaunch could not
    compile)."""
    for build in builds_around(environ):
        if build.path == bundled.path or build.version == bundled.version:
            continue
        if build.cuda not in (refused or {}):
            return build
    return None


def no_second_note(
    bundled: Ptxas, environ: Mapping[str, str], refused: Mapping[str, str] | None = None
) -> str:
    places = ", ".join(str(p) for p in candidates(environ))
    note = (
        f"no second ptxas: none of another version than the bundled {bundled.version} on the "
        f"PATH, under CUDA_HOME / CUDA_PATH or at {DEFAULT_TOOLKIT} (looked at: {places})"
    )
    said = "; ".join(f"CUDA {cuda}: {why}" for cuda, why in sorted((refused or {}).items()))
    return f"{note}; this Triton refuses {said}" if said else note


@dataclass(frozen=True)
class Assembled:
    """One ptxas run over one PTX file."""

    ptxas: Ptxas
    opt_level: str  # "default" or the level given
    ok: bool
    cubin: str  # the cubin written ("" when it failed)
    log: str  # what ptxas printed


def ptx_isa(build: Ptxas) -> str:
    """The newest PTX ISA ``build`` reads (``8.7`` for 12.8, ``9.0`` for 13.0): the
    ``.version`` Triton writes for it (``ptx_get_version`` in its NVIDIA backend)."""
    major, minor = (int(n) for n in build.version.split(".")[:2])
    if major >= 13:
        number = 90 + (major - 13) * 10 + minor
    elif major == 12:
        number = 80 + minor - (1 if minor >= 6 else 0)
    else:
        number = 70 + minor if major == 11 else 63 + minor
    return f"{number // 10}.{number % 10}"


def for_build(ptx: str, build: Ptxas) -> str:
    """``ptx`` with the ``.version`` line Triton writes for ``build``: the same program."""
    return _PTX_VERSION_LINE.sub(f".version {ptx_isa(build)}", ptx, count=1)


def assemble(
    ptx: Path, build: Ptxas, gpu_name: str, folder: Path, opt_level: str = "default"
) -> Assembled:
    """Assemble ``ptx`` for ``gpu_name`` (``sm_90a``) with ``build``, as Triton calls ptxas
    (``-lineinfo -v``), into ``folder``; its ``.version`` line is the one Triton writes for
    that build (a 13.4 PTX ISA is newer than a 13.0 ptxas reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    level = "" if opt_level == "default" else f"-O{opt_level}"
    name = f"{ptx.stem}-ptxas-{build.version}{level}"
    given = folder / f"{name}.ptx"
    given.write_text(for_build(ptx.read_text(errors="replace"), build))
    cubin = folder / f"{name}.cubin"
    argv = [build.path, "-lineinfo", "-v", f"--gpu-name={gpu_name}", str(given), "-o", str(cubin)]
    if opt_level != "default":
        argv[1:1] = ["--opt-level", opt_level]
    try:
        ran = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        return Assembled(build, opt_level, False, "", str(exc))
    ok = ran.returncode == 0 and cubin.is_file()
    return Assembled(build, opt_level, ok, str(cubin) if ok else "", ran.stdout + ran.stderr)


def same_ptx(first: str, second: str) -> bool:
    """Whether two PTX texts are the same program: equal but for the ``.version`` line
    Triton writes for the ptxas it found."""
    return _PTX_VERSION_LINE.sub("", first).strip() == _PTX_VERSION_LINE.sub("", second).strip()


def disassembler(build: Ptxas) -> str | None:
    """``cuobjdump``: beside the bundled ptxas (Triton ships one), or on the PATH."""
    beside = Path(build.path).parent / "cuobjdump"
    return str(beside) if beside.is_file() else shutil.which("cuobjdump")


def sass(cubin: Path, cuobjdump: str) -> list[str] | None:
    """The SASS instructions of ``cubin`` in order, their addresses left out; None when
    ``cuobjdump`` cannot read it."""
    try:
        shown = subprocess.run(
            [cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = _SASS.findall(shown.stdout)
    return found if shown.returncode == 0 and found else None


def sass_differences(first: Sequence[str], second: Sequence[str]) -> int:
    """How many instructions of the longer side an alignment of the two listings does not
    match: 0 for the same SASS."""
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


@dataclass(frozen=True)
class Variant:
    """One way to assemble the case's PTX: a name, the build, its level, the knobs."""

    name: str  # bundled, second, bundled-O0
    ptxas: Ptxas
    opt_level: str
    env: dict[str, str]


def variants(found: Toolchain) -> list[Variant]:
    """The relaunches: the bundled build first (the failure must show again), then the
    second build and the bundled one at -O0, each where there is one."""
    if found.bundled is None:
        return []
    plan = [Variant("bundled", found.bundled, "default", {})]
    if found.second is not None:
        chosen = {knob: found.second.path for knob in PATH_KNOBS}
        plan.append(Variant("second", found.second, "default", chosen))
    if found.no_opt_knob:
        plan.append(Variant("bundled-O0", found.bundled, "0", {NO_OPT_KNOB: "1"}))
    return plan


@dataclass(frozen=True)
class Relaunched:
    """What one relaunch gave: its outcome and signature, as the engine classified them."""

    outcome: str  # an Outcome label: passed, wrong-result, runtime-error, ...
    signature: str  # "" when it passed
    message: str = ""


@dataclass(frozen=True)
class Run:
    """One variant's relaunch and what it left."""

    variant: str
    ptxas: str  # the build's path
    version: str
    opt_level: str
    outcome: str
    signature: str
    same_failure: bool  # failed with the case's own signature
    same_ptx: bool | None  # the PTX equals the bundled run's (None: no PTX to compare)
    sass_differs: int | None  # instructions unlike the bundled run's SASS (None: not compared)
    ptx: str  # the PTX file the relaunch compiled ("" when none was found)
    cubin: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


class AssemblerBlame(enum.Enum):
    """Whose bug it is, as far as the assembler goes."""

    ASSEMBLER = "ptxas-bug"  # the same PTX assembled otherwise does not fail
    NOT_ASSEMBLER = "not-the-assembler"  # every build fails the same way
    UNDECIDED = "undecided"  # no second build, the failure did not show again, ...


def decide(runs: Sequence[Run]) -> tuple[AssemblerBlame, str]:
    """The verdict and one line that says why, from the relaunches (bundled first)."""
    if not runs or runs[0].variant != "bundled":
        return AssemblerBlame.UNDECIDED, "the case was not relaunched with its bundled ptxas"
    reference, others = runs[0], list(runs[1:])
    if not reference.same_failure:
        return AssemblerBlame.UNDECIDED, (
            f"relaunched with the bundled ptxas {reference.version} it gave "
            f"{reference.signature or reference.outcome}, not the case's failure"
        )
    if not others:
        return AssemblerBlame.UNDECIDED, "no second ptxas build and no -O0 knob: nothing to compare"
    comparable = [r for r in others if r.same_ptx is not False]
    changed = [r.variant for r in others if r.same_ptx is False]
    if not comparable:
        return AssemblerBlame.UNDECIDED, (
            f"the PTX of {', '.join(changed)} differs beyond its .version line: "
            "not only the assembler changed"
        )
    passed = [r for r in comparable if r.passed]
    if passed:
        which = "; ".join(f"{_named(r)} passes" for r in passed)
        caveat = ""
        if all(r.variant == "bundled-O0" for r in passed):
            caveat = (
                " (at -O0 only: a race in the code Triton generated can also hide at -O0;"
                " read racecheck's evidence)"
            )
        return AssemblerBlame.ASSEMBLER, (
            f"the same PTX fails with {_named(reference)}; {which}{caveat}"
        )
    if all(r.same_failure for r in comparable):
        names = ", ".join(_named(r) for r in [reference, *comparable])
        return AssemblerBlame.NOT_ASSEMBLER, f"every build fails the same way: {names}"
    others_said = "; ".join(f"{_named(r)}: {r.signature or r.outcome}" for r in comparable)
    return AssemblerBlame.UNDECIDED, f"the other builds fail otherwise ({others_said})"


def _named(run: Run) -> str:
    level = " at -O0" if run.opt_level == "0" else ""
    return f"ptxas {run.version}{level}"


@dataclass(frozen=True)
class Evidence:
    """The differential's record for one failing launch."""

    available: bool  # a bundled ptxas and at least one other way to assemble
    bundled: str  # its version, "" when unknown
    second: str  # the second build's version, "" when none
    runs: tuple[Run, ...]
    verdict: AssemblerBlame
    reason: str
    note: str = ""

    @property
    def is_assembler(self) -> bool:
        return self.verdict is AssemblerBlame.ASSEMBLER

    def to_json(self) -> dict[str, object]:
        return {
            "available": self.available,
            "bundled": self.bundled,
            "second": self.second,
            "runs": [asdict(r) for r in self.runs],
            "verdict": self.verdict.value,
            "reason": self.reason,
            "note": self.note,
        }


#: Relaunches the case with more environment (the variant's knobs, its own cache folder);
#: the runner supplies it, with the case's isolation.
Relaunch = Callable[[Mapping[str, str]], Relaunched]


def kernel_files(cache: Path, suffix: str) -> list[Path]:
    """The files of one kind (``.ptx``, ``.cubin``) a relaunch's Triton cache holds."""
    return sorted(cache.rglob(f"*{suffix}")) if cache.is_dir() else []


def gather(signature: str, python: str, arch: int, folder: Path, relaunch: Relaunch) -> Evidence:
    """Relaunch a failing case (``signature``: its failure) once per variant, each with a
    cache folder of its own under ``folder``, and decide."""
    found = toolchain(python, arch)
    plan = variants(found)
    bundled = found.bundled.version if found.bundled else ""
    second = found.second.version if found.second else ""
    if len(plan) < 2:
        why = found.note or "this Triton has no ptxas knob to change"
        return Evidence(False, bundled, second, (), AssemblerBlame.UNDECIDED, why, found.note)
    runs: list[Run] = []
    reference_ptx = ""
    reference_sass: list[str] | None = None
    cuobjdump = disassembler(plan[0].ptxas)
    for variant in plan:
        cache = folder / f"ptxas-{variant.name}"
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        got = relaunch({**variant.env, "TRITON_CACHE_DIR": str(cache)})
        ptx = kernel_files(cache, ".ptx")
        cubin = kernel_files(cache, ".cubin")
        text = "\n".join(p.read_text(errors="replace") for p in ptx)
        if variant.name == "bundled":
            reference_ptx = text
        alike = same_ptx(reference_ptx, text) if text and reference_ptx else None
        listing = sass(cubin[0], cuobjdump) if cubin and cuobjdump else None
        if variant.name == "bundled":
            reference_sass = listing
        differs = None
        if variant.name != "bundled" and listing is not None and reference_sass is not None:
            differs = sass_differences(reference_sass, listing)
        runs.append(
            Run(
                variant=variant.name,
                ptxas=variant.ptxas.path,
                version=variant.ptxas.version,
                opt_level=variant.opt_level,
                outcome=got.outcome,
                signature=got.signature,
                same_failure=bool(got.signature) and got.signature == signature,
                same_ptx=None if variant.name == "bundled" else alike,
                sass_differs=differs,
                ptx=str(ptx[0]) if ptx else "",
                cubin=str(cubin[0]) if cubin else "",
                message=got.message[:300],
            )
        )
    verdict, reason = decide(runs)
    return Evidence(True, bundled, second, tuple(runs), verdict, reason, found.note)


def main(argv: Sequence[str]) -> int:
    """``python -m suite.engine.ptxas PTX GPU_NAME [PTXAS ...]``: assemble one PTX file with
    the given builds (default: this Triton's bundled one for sm_90 and the second one found),
    at their default level, one line each."""
    ptx, gpu_name, *paths = argv
    if paths:
        builds = [b for b in (Ptxas.at(p) for p in paths) if b is not None]
    else:
        import sys

        found = toolchain(sys.executable, 90)
        builds = [b for b in (found.bundled, found.second) if b is not None]
        if found.note:
            print(found.note)
    folder = Path(ptx).resolve().parent
    for build in builds:
        done = assemble(Path(ptx), build, gpu_name, folder)
        said = f"ok {done.cubin}" if done.ok else "failed"
        print(f"ptxas {build.version} ({build.path}): {said}")
        if not done.ok:
            print(done.log.strip())
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
