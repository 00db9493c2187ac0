"""A light structural reading of printed MLIR, for the IR reducer
(:mod:`suite.replay.ir_reduce`): ops, regions, SSA values and their types, attribute
aliases; and the text edits a candidate is made of. Text only: nothing here parses MLIR
for real (the replay child does, :func:`suite.replay.passes.ir_types`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

NAME = r"%[\w$.-]+"
RESULTS_AT = re.compile(rf"^\s*((?:{NAME}(?::\d+)?)(?:\s*,\s*{NAME}(?::\d+)?)*)\s*=\s")
HEADER_DEF = re.compile(rf"({NAME})\s*=\s")
TYPED_DEF = re.compile(rf"({NAME}):\s")
ALIAS = re.compile(r"^\s*([#!][\w$.-]+)\s*=")
TERMINATORS = re.compile(r"(yield|return|condition|terminator)\b")


def token_pattern(name: str) -> re.Pattern[str]:
    """A use of ``name`` (``%12#0``, ``%a``), not of a longer name."""
    return re.compile(re.escape(name) + (r"(?![\w$.#-])" if "#" not in name else r"(?!\d)"))


@dataclass
class Region:
    start: int
    end: int = -1


@dataclass
class Op:
    """One operation in the text: its lines, what it defines, where it sits."""

    start: int
    end: int
    name: str
    names: list[str]  # the SSA names it defines (``%12`` for ``%12:4``)
    slots: list[str]  # how each result is used: ``%12#0``... or ``%a``
    region: Region | None  # the region it sits in
    regions: list[Region] = field(default_factory=list)
    block_args: list[str] = field(default_factory=list)

    @property
    def has_regions(self) -> bool:
        return bool(self.regions)


@dataclass
class Value:
    token: str
    line: int  # 0-based line of its definition
    region: Region | None
    type: str | None
    kind: str  # func-arg, block-arg, result


class IRText:
    """A light structural reading of printed MLIR: ops, regions, values, aliases."""

    def __init__(self, text: str) -> None:
        self.lines = text.rstrip("\n").split("\n")
        self.ops: list[Op] = []
        self.aliases: dict[str, int] = {}
        self.labels: list[tuple[int, Region | None]] = []
        stack: list[tuple[Op, Region]] = []
        for index, line in enumerate(self.lines):
            stripped = line.strip()
            if not stripped or stripped.startswith("//"):
                continue
            if not stack and ALIAS.match(line):
                self.aliases[ALIAS.match(line).group(1)] = index  # type: ignore[union-attr]
                continue
            if stripped.startswith("^"):
                self.labels.append((index, stack[-1][1] if stack else None))
                continue
            if stripped.startswith("}"):
                if not stack:
                    continue
                op, region = stack.pop()
                region.end = index
                if stripped.endswith("{"):
                    fresh = Region(index)
                    op.regions.append(fresh)
                    stack.append((op, fresh))
                else:
                    op.end = index
                continue
            results = RESULTS_AT.match(line)
            names: list[str] = []
            slots: list[str] = []
            rest = line
            if results:
                for part in results.group(1).split(","):
                    base, _, count = part.strip().partition(":")
                    names.append(base)
                    if count:
                        slots += [f"{base}#{i}" for i in range(int(count))]
                    else:
                        slots.append(base)
                rest = line[results.end() :]
            opname = rest.strip().split(" ")[0].split("(")[0].strip('"')
            op = Op(index, index, opname, names, slots, stack[-1][1] if stack else None)
            self.ops.append(op)
            if stripped.endswith("{"):
                header = rest
                op.block_args = HEADER_DEF.findall(header) + TYPED_DEF.findall(header)
                region = Region(index)
                op.regions.append(region)
                stack.append((op, region))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def uses(self, token: str) -> int:
        pattern = token_pattern(token)
        return sum(len(pattern.findall(line)) for line in self.lines)

    def used(self, op: Op) -> bool:
        """Whether any result of ``op`` is used (each name appears once where defined)."""
        text = self.text()
        return any(len(token_pattern(name).findall(text)) > 1 for name in op.names)

    def without(self, spans: list[tuple[int, int]]) -> list[str]:
        drop = {i for start, end in spans for i in range(start, end + 1)}
        return [line for i, line in enumerate(self.lines) if i not in drop]

    def values(self, types: dict[str, list[str]]) -> list[Value]:
        """Every SSA value with the type the child printed for it (or read from the text)."""
        expand = self._alias_expander()
        found: list[Value] = []
        for op in self.ops:
            printed = types.get(str(op.start + 1))
            for index, slot in enumerate(op.slots):
                value_type = printed[index] if printed and index < len(printed) else None
                found.append(Value(slot, op.start, op.region, value_type, "result"))
            if op.regions and op.block_args:
                region = op.regions[0]
                header = self.lines[op.start]
                typed = dict(_typed_args(header, expand))
                iter_types = printed or []
                plain = [a for a in HEADER_DEF.findall(header)]
                for arg in op.block_args:
                    value_type = typed.get(arg)
                    if value_type is None and op.name == "scf.for" and arg in plain:
                        position = plain.index(arg)
                        if position == 0:
                            end = re.search(r":\s*([\w]+)\s*\{\s*$", header)
                            value_type = end.group(1) if end else "index"
                        elif position - 1 < len(iter_types):
                            value_type = iter_types[position - 1]
                    found.append(
                        Value(
                            arg,
                            op.start,
                            region,
                            value_type,
                            "func-arg" if op.name.endswith("func") else "block-arg",
                        )
                    )
        return found

    def enclosing_func(self, op: Op) -> Op | None:
        funcs = [f for f in self.ops if f.name.endswith("func") and f.start < op.start <= f.end]
        return funcs[-1] if funcs else None

    def fresh_name(self, offset: int) -> str:
        text = self.text()
        index = 0
        while True:
            name = f"%red{index}"
            if not token_pattern(name).search(text):
                if offset == 0:
                    return name
                offset -= 1
            index += 1

    def with_arguments(self, func: Op, extra: list[str]) -> str | None:
        """The function's header line with ``extra`` arguments appended."""
        header = self.lines[func.start]
        span = arg_span(header)
        if span is None:
            return None
        open_at, close_at = span
        inner = header[open_at + 1 : close_at].strip()
        joined = ", ".join(([inner] if inner else []) + extra)
        return header[: open_at + 1] + joined + header[close_at:]

    def alias_compressor(self) -> Callable[[str], str]:
        """Printed types use no aliases; put the file's own aliases back in."""
        table = sorted(
            ((self.lines[i].split("=", 1)[1].strip(), a) for a, i in self.aliases.items()),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )

        def compress(text: str) -> str:
            for value, alias in table:
                text = text.replace(value, alias)
            return text

        return compress

    def _alias_expander(self) -> Callable[[str], str]:
        table = {}
        for alias, index in self.aliases.items():
            table[alias] = self.lines[index].split("=", 1)[1].strip()
        names = sorted(table, key=len, reverse=True)

        def expand(text: str) -> str:
            for _ in range(4):
                changed = text
                for alias in names:
                    changed = re.sub(re.escape(alias) + r"(?![\w$.-])", table[alias], changed)
                if changed == text:
                    break
                text = changed
            return text

        return expand


def _typed_args(header: str, expand: Callable[[str], str]) -> Iterator[tuple[str, str]]:
    """``%arg0: type`` pairs of a header (function arguments, partition arguments)."""
    for match in TYPED_DEF.finditer(header):
        rest = header[match.end() :]
        depth = 0
        end = len(rest)
        for index, char in enumerate(rest):
            if char in "<([{":
                if depth == 0 and char == "{" and rest[:index].strip():
                    end = index
                    break
                depth += 1
            elif char in ">)]}":
                if depth == 0:
                    end = index
                    break
                depth -= 1
            elif char == "," and depth == 0:
                end = index
                break
        kind = re.sub(r"\s+loc\(.*$", "", rest[:end]).strip()
        yield match.group(1), expand(kind)


def visible_at(value: Value, op: Op) -> bool:
    """Whether ``value`` dominates ``op`` (defined before it, in a region that holds it)."""
    if value.line >= op.start:
        return False
    region = value.region
    if region is None:
        return True
    end = region.end if region.end >= 0 else 10**9
    return region.start <= op.start <= end


def count_lines(text: str) -> int:
    return len([line for line in text.splitlines() if line.strip()])


def text_size(text: str) -> tuple[int, int]:
    """What the reducer makes smaller: lines first, then characters."""
    return count_lines(text), len(text)


def arg_span(header: str) -> tuple[int, int] | None:
    """Where the argument list of a ``tt.func @name(...)`` header opens and closes."""
    open_at = header.find("(", header.find("@"))
    if open_at < 0 or header.find("@") < 0:
        return None
    depth = 0
    for index in range(open_at, len(header)):
        if header[index] in "(<[{":
            depth += 1
        elif header[index] in ")>]}":
            depth -= 1
            if depth == 0:
                return open_at, index
    return None


def alias_pattern(alias: str) -> re.Pattern[str]:
    return re.compile(re.escape(alias) + r"(?![\w$.-])")
