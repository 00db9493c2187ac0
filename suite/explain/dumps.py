"""Per-pass MLIR dumps of two compiles, and the first pass that makes them differ.

``MLIR_ENABLE_DUMP=1`` makes Triton print the IR before every MLIR pass
(``// -----// IR Dump Before <Pass>: <pass-arg>{<options>} (...) //----- //``), and
``MLIR_DUMP_PATH`` (Triton 3.3.1 and later) sends it to a file. The pipeliner adds
internal dumps (``// -----// SoftwarePipeliner internal IR Dump After: LowerLoops``): kept,
never aligned. What a pass produced is what the next pass was given.

Two variants of one kernel (``num_stages=3`` and ``num_stages=1``) are compared after
normalization: locations (``loc(...)``, ``#locN = ...``) and SSA names (``%arg3``,
``%c128_i32``, ``%a_desc_0``) go, so only real differences count. A pass's options are
not its output (``num-stages=3``) and are not compared. The difference between the
variants is the multiset of normalized lines one has and the other lacks; the first pass
after which that difference changes is the first pass whose output differs (when the
inputs were equal) or the first that acts on the difference (when the kernel's IR already
differed: a ``num_stages`` given to ``tl.range`` is an attribute of the loop from the start).
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections import Counter
from dataclasses import dataclass

_HEADER = re.compile(r"^// -----// IR Dump Before (\S+?):? (\S*?)(\{.*\})? \((.*)\) //----- //$")
_INTERNAL = re.compile(r"^// -----// (.+ internal IR Dump After: .+)$")
_LOC_LINE = re.compile(r"^#loc\d*\s*=")
_LOC = re.compile(r"\bloc\(")
_SSA = re.compile(r"%[\w$.\-]+")


@dataclass(frozen=True)
class Step:
    """The IR one pass was given: the pass, its options, its scope, the normalized text."""

    index: int
    name: str
    options: str
    scope: str
    text: str
    internal: bool = False

    @property
    def label(self) -> str:
        return f"{self.name}{self.options}" if self.options else self.name


def split_dump(text: str) -> list[Step]:
    """The dump of one compile as its steps, in order, each normalized."""
    steps: list[Step] = []
    header: tuple[str, str, str, bool] | None = None
    body: list[str] = []

    def close() -> None:
        if header is not None:
            name, options, scope, internal = header
            steps.append(Step(len(steps), name, options, scope, normalize(body), internal))

    for line in text.splitlines():
        found, inner = _HEADER.match(line), _INTERNAL.match(line)
        if found or inner:
            close()
            body = []
            if found:
                header = (found.group(1), found.group(3) or "", found.group(4), False)
            else:
                header = (inner.group(1) if inner else "", "", "", True)
            continue
        body.append(line)
    close()
    return steps


def _strip_locations(line: str) -> str:
    """``line`` without its ``loc(...)`` parts (balanced: ``loc("a"(#loc))``)."""
    while found := _LOC.search(line):
        depth, end = 0, found.end() - 1
        for end in range(found.end() - 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            if depth == 0:
                break
        line = line[: found.start()].rstrip() + line[end + 1 :]
    return line.rstrip()


def normalize(lines: list[str]) -> str:
    """IR without locations and SSA names; blank lines dropped."""
    kept = []
    for line in lines:
        if _LOC_LINE.match(line):
            continue
        line = _SSA.sub("%_", _strip_locations(line))
        if line.strip():
            kept.append(line)
    return "\n".join(kept)


def difference(one: str, other: str) -> tuple[frozenset[tuple[str, int]], ...]:
    """The normalized lines (with counts) ``one`` has and ``other`` lacks, and back."""
    a, b = Counter(one.splitlines()), Counter(other.splitlines())
    return frozenset((a - b).items()), frozenset((b - a).items())


@dataclass(frozen=True)
class FirstDifference:
    """Where two compiles part: the pass, in each variant, and a diff of its output (of its
    input, when the failing variant stopped in it)."""

    passing: Step | None  # the pass in the passing variant (None: no MLIR pass parts them)
    failing: Step | None
    position: int  # the pass's place among the failing variant's passes, from 1
    input_differs: bool  # the IR differed before the first pass already
    stopped: bool  # the failing compile ended in this pass; the passing one went on
    diff: str  # unified diff, failing -> passing, normalized
    aligned: int  # passes compared
    only_failing: tuple[str, ...]  # passes, among those compared, that ran in one only
    only_passing: tuple[str, ...]

    @property
    def pass_name(self) -> str:
        return self.failing.name if self.failing else ""

    def line(self) -> str:
        if self.failing is None or self.passing is None:
            return (
                f"no MLIR pass output differs between the variants ({self.aligned} passes "
                "compared): the difference is in LLVM IR or PTX"
            )
        where = f"pass {self.position}"
        if self.failing.label != self.passing.label:  # the options differ (num-stages=3, =1)
            where += f"; {self.failing.label} against {self.passing.label}"
        if self.stopped:
            given = "given different IR" if self.diff else "given the same IR"
            return (
                f"the failing variant ends in {self.failing.name} ({where}), where the "
                f"passing variant goes on ({given})"
            )
        what = (
            "first pass that acts on the difference (the IR differed from the start)"
            if self.input_differs
            else "first pass whose output differs"
        )
        return f"{what}: {self.failing.name} ({where})"


def _diff(one: str, other: str, context: int) -> str:
    lines = difflib.unified_diff(
        one.splitlines(), other.splitlines(), "failing variant", "passing variant", n=context,
        lineterm="",
    )  # fmt: skip
    return "\n".join(lines)


def first_difference(failing: list[Step], passing: list[Step], context: int = 3) -> FirstDifference:
    """Align the two compiles' passes by name and find the first pass after which the
    variants' difference changes (:func:`difference`), or the pass the failing compile
    ended in while the passing one went on."""
    a = [s for s in failing if not s.internal]
    b = [s for s in passing if not s.internal]
    matcher = difflib.SequenceMatcher(a=[s.name for s in a], b=[s.name for s in b], autojunk=False)
    pairs = [
        (a[block.a + k], b[block.b + k])
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]
    if not pairs:
        return FirstDifference(None, None, 0, False, False, "", 0, (), ())
    # Passes run by one variant only, among those compared (not after a compile stopped).
    last_a, last_b = pairs[-1][0].index, pairs[-1][1].index
    matched = {s.index for pair in pairs for s in pair}
    only_a = tuple(s.label for s in a if s.index not in matched and s.index < last_a)
    only_b = tuple(s.label for s in b if s.index not in matched and s.index < last_b)
    before = difference(pairs[0][0].text, pairs[0][1].text)
    input_differs = any(before)
    position = {id(s): n for n, s in enumerate(a, 1)}
    for (pass_a, pass_b), (out_a, out_b) in itertools.pairwise(pairs):
        after = difference(out_a.text, out_b.text)
        if after != before:
            diff = _diff(out_a.text, out_b.text, context)
            return FirstDifference(
                pass_b, pass_a, position[id(pass_a)], input_differs, False, diff, len(pairs),
                only_a, only_b,
            )  # fmt: skip
        before = after
    end_a, end_b = pairs[-1]
    if end_a is a[-1] and end_b is not b[-1]:
        diff = _diff(end_a.text, end_b.text, context)
        return FirstDifference(
            end_b, end_a, position[id(end_a)], input_differs, True, diff, len(pairs), only_a,
            only_b,
        )  # fmt: skip
    return FirstDifference(None, None, 0, input_differs, False, "", len(pairs), only_a, only_b)
