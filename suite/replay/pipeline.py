"""MLIR reproducer files and textual pass pipelines, read without triton.

A reproducer file holds the IR and, in its ``{-# external_resources: {mlir_reproducer:
{pipeline: "..."}} #-}`` block, the pipeline that failed on it: :func:`split_reproducer`
separates the two, :func:`parse_pipeline` reads the pipeline into :class:`PassSpec`
elements. Standard library only: the replay child (:mod:`suite.replay.child`) imports this
under whatever interpreter holds the release being replayed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypedDict

# Prefixes a pass name carries that its binding's name leaves out.
NAME_PREFIXES = (
    "tritonamdgpu",
    "tritonnvidiagpu",
    "tritonnvidia",
    "tritongpu",
    "tritoninstrument",
    "triton",
    "nvgpu",
    "nvws",
    "convert",
    "gluon",
)

#: The anchor of an op-agnostic pass manager in a textual pipeline.
OP_AGNOSTIC = "any"
REPRODUCER_BLOCK = re.compile(r"\{-#.*?#-\}", re.S)
PIPELINE_FIELD = re.compile(r'pipeline:\s*"((?:[^"\\]|\\.)*)"')


class PipelineError(ValueError):
    """A pipeline string this tool cannot read."""


# ---------------------------------------------------------------------------------------------


def split_reproducer(text: str) -> tuple[str, str | None]:
    """The IR of an MLIR reproducer file without its ``{-# ... #-}`` block, and its pipeline."""
    pipeline = None
    for block in REPRODUCER_BLOCK.findall(text):
        if "mlir_reproducer" in block:
            found = PIPELINE_FIELD.search(block)
            if found:
                pipeline = found.group(1).replace('\\"', '"')
    ir = REPRODUCER_BLOCK.sub("", text).rstrip() + "\n"
    return ir, pipeline


def split_top(text: str, separators: str) -> list[str]:
    """Split at separators that are not inside (), {}, [], <> or quotes."""
    parts: list[str] = []
    depth = 0
    quote = False
    current: list[str] = []
    for char in text:
        if char == '"':
            quote = not quote
        elif not quote and char in "({[<":
            depth += 1
        elif not quote and char in ")}]>":
            depth -= 1
        if not quote and depth == 0 and char in separators:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if depth != 0 or quote:
        raise PipelineError(f"unbalanced brackets or quotes in {text!r}")
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


@dataclass
class PassSpec:
    """One element of a textual pass pipeline: ``name{opt=value ...}``, or a nested
    pipeline ``anchor(...)`` (``nested`` holds its elements)."""

    name: str
    options: dict[str, str] = field(default_factory=dict)
    text: str = ""
    nested: list[PassSpec] | None = None

    @property
    def key(self) -> str:
        if self.nested is None:
            return self.name
        return f"{self.name}({','.join(p.key for p in self.nested)})"

    def to_json(self) -> PassSpecJson:
        return {
            "name": self.name,
            "options": self.options,
            "text": self.text,
            "nested": [p.to_json() for p in self.nested] if self.nested is not None else None,
        }

    @classmethod
    def from_json(cls, record: PassSpecJson) -> PassSpec:
        nested = record.get("nested")
        return cls(
            record["name"],
            dict(record.get("options") or {}),
            record.get("text", ""),
            [cls.from_json(p) for p in nested] if nested is not None else None,
        )


class PassSpecJson(TypedDict):
    """A :class:`PassSpec` in ``replay.json`` and in the replay child's plan."""

    name: str
    options: dict[str, str]
    text: str
    nested: list[PassSpecJson] | None


def parse_options(text: str) -> dict[str, str]:
    """``a=1 b={x y} c="q r"`` as a dict (a bare name is ``true``)."""
    options = {}
    for item in split_top(text, " \t\n"):
        name, eq, value = item.partition("=")
        options[name.strip()] = value.strip() if eq else "true"
    return options


def parse_element(text: str) -> PassSpec:
    text = text.strip()
    match = re.fullmatch(r"([\w.$-]+)\s*(.*)", text, re.S)
    if not match:
        raise PipelineError(f"cannot read pipeline element {text!r}")
    name, rest = match.group(1), match.group(2).strip()
    if not rest:
        return PassSpec(name, {}, text)
    if rest.startswith("{") and rest.endswith("}"):
        return PassSpec(name, parse_options(rest[1:-1]), text)
    if rest.startswith("(") and rest.endswith(")"):
        inner = [parse_element(part) for part in split_top(rest[1:-1], ",")]
        return PassSpec(name, {}, text, inner)
    raise PipelineError(f"cannot read pipeline element {text!r}")


def parse_pipeline(text: str) -> tuple[str, list[PassSpec]]:
    """``builtin.module(a{x=1},b)`` (or ``any(...)``) as its anchor and its passes.

    Triton 3.0-3.2 ran an op-agnostic pass manager on the module, which MLIR's crash
    reproducer records as ``builtin.module(any(a,b))``: the passes ran on the module
    itself, as each binding adds them, so that one ``any`` group is unwrapped.
    """
    outer = parse_element(text)
    if outer.nested is None:
        raise PipelineError(f"not a pass pipeline (no anchor(...)): {text!r}")
    passes = outer.nested
    if len(passes) == 1 and passes[0].name == OP_AGNOSTIC and passes[0].nested is not None:
        passes = passes[0].nested
    return outer.name, passes


def pass_flag(spec: PassSpec, options: dict[str, str] | None = None) -> str:
    """The ``triton-opt`` flag for one pass: ``-name`` or ``-name=a=1`` or ``-name="a=1 b=2"``."""
    options = spec.options if options is None else options
    if not options:
        return f"-{spec.name}"
    joined = " ".join(f"{k}={v}" for k, v in options.items())
    return f"-{spec.name}={joined}" if len(options) == 1 else f'-{spec.name}="{joined}"'


def normalize_name(name: str) -> str:
    """A pass name, or a binding's (``add_`` dropped), reduced to lower-case letters and
    digits without the prefixes pass names carry: ``tritongpu-assign-latencies`` and
    ``add_assign_latencies`` both give ``assignlatencies``."""
    name = name[4:] if name.startswith("add_") else name
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    for prefix in NAME_PREFIXES:
        if flat.startswith(prefix) and len(flat) > len(prefix):
            flat = flat[len(prefix) :]
            break
    return flat
