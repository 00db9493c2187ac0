"""The one Jinja environment (report, gate, dashboard) and the filters that keep
untrusted text inert.

Every value a Markdown template (``*.md.j2``) prints goes through one escaping filter,
:func:`markdown_text`, unless a filter already made it safe (``fence``, ``code``): a
backtick in a signature cannot close a code span, ``<details open><img>`` in a message
is shown, not rendered. HTML templates are autoescaped; ``repro.py.j2`` renders Python
and quotes its values with ``pyrepr``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    StrictUndefined,
    pass_context,
    select_autoescape,
)
from jinja2.runtime import Context
from markupsafe import Markup

from suite.engine import scrub_text
from suite.errors import UsageError


def control_free(text: str) -> str:
    """``text`` with every control character but a tab and a line break replaced: a
    terminal escape or a NUL byte must not reach an issue raw."""
    return _CONTROL.sub("\ufffd", text)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def fence(text: str, info: str = "") -> Markup:
    """A fenced code block that no backtick run inside ``text`` can close."""
    text = control_free(str(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return Markup(f"{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}")


def inline_code(text: str) -> Markup:
    """Inline code that holds any backticks ``text`` has."""
    text = " ".join(control_free(str(text)).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(f"{ticks}{pad}{text}{pad}{ticks}")


_MARKDOWN_ACTIVE = {
    "\\": "\\\\",
    "`": "\\`",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "[": "\\[",
    "]": "\\]",
}
# What GitHub links by itself in text: a mention (``@kernel_name`` in an MLIR error pings a
# user of that name) and an issue reference (``#1234``, ``GH-12``). A word joiner (U+2060,
# invisible) after its first character leaves it plain text. A bare URL stays a link: it
# shows where it goes (a link with other text, or an image, is escaped above).
_AUTOLINKED = re.compile(r"(?i)(@)(?=[a-z0-9_-])|(#)(?=[0-9a-z])|(gh)(?=-[0-9])")
WORD_JOINER = "\u2060"


def markdown_text(text: Any) -> Markup:
    """``text`` inert in Markdown: one line, no code span, no HTML tag, no entity, no
    link or image, no mention or reference that GitHub would link, no
    control character (a NUL or an ESC from a finding's field is shown as U+FFFD)."""
    line = " ".join(control_free(str(text)).splitlines())
    escaped = "".join(_MARKDOWN_ACTIVE.get(ch, ch) for ch in line)
    return Markup(_AUTOLINKED.sub(lambda m: m.group(0) + WORD_JOINER, escaped))


@pass_context
def _finalize(context: Context, value: Any) -> Any:
    """What every ``{{ ... }}`` prints: Markdown templates escape what no filter made safe."""
    if isinstance(value, Markup) or not str(context.name or "").endswith(".md.j2"):
        return value
    return markdown_text(value)


def trim_lines(text: str, head: int = 40, tail: int = 40, width: int = 2000) -> str:
    """The first ``head`` and last ``tail`` lines, the cut counted; each line at most ``width``."""
    lines = [
        line if len(line) <= width else line[:width] + f" ... [{len(line) - width} chars cut]"
        for line in text.rstrip("\n").splitlines()
    ]
    if len(lines) <= head + tail:
        return "\n".join(lines)
    cut = len(lines) - head - tail
    return "\n".join([*lines[:head], f"... [{cut} lines cut] ...", *lines[len(lines) - tail :]])


#: No line of a Markdown report is longer: GitHub and mail readers wrap or scroll past it.
MARKDOWN_WIDTH = 300


def clip_lines(markdown: str, width: int = MARKDOWN_WIDTH) -> str:
    """``markdown`` with every line over ``width`` characters cut, the cut counted (the
    templates keep their own lines short; this holds for what they quote)."""
    marker = " ... [{} chars cut]"
    keep = width - len(marker.format(10**6))
    return "\n".join(
        line if len(line) <= width else line[:keep] + marker.format(len(line) - keep)
        for line in markdown.split("\n")
    )


def table_cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def py_assign(value: Any, name: str, width: int = 100) -> str:
    """``NAME = <repr>``, a dict's items packed onto lines of at most ``width`` when the
    whole does not fit on one."""
    one_line = f"{name} = {value!r}"
    if len(one_line) <= width or not isinstance(value, dict) or not value:
        return one_line
    rows: list[list[str]] = [[]]
    for item in (f"{key!r}: {item!r}" for key, item in value.items()):
        if rows[-1] and len(", ".join([*rows[-1], item])) > width - 5:
            rows.append([])
        rows[-1].append(item)
    return "\n".join([f"{name} = {{", *(f"    {', '.join(row)}," for row in rows), "}"])


_KEY_LINE = re.compile(
    r"\berror\b|\bfatal\b|Error:|Exception:|LLVM ERROR|Assertion|Pipeline failed|"
    r"Insufficient|not supported|Segmentation|Aborted|Fatal Python error|"
    r"^(?:expected|seen): |^triton \S+, \S+: |REPRODUCED|not reproduced",
    re.IGNORECASE,
)


def key_lines(text: str, limit: int = 25) -> str:
    """The lines of ``text`` that say what went wrong (else its tail), at most ``limit``."""
    lines = [line for line in text.splitlines() if _KEY_LINE.search(line)]
    if not lines:
        lines = text.rstrip("\n").splitlines()[-limit:]
    seen: list[str] = []
    for line in lines:
        if line not in seen:
            seen.append(line)
    return trim_lines("\n".join(seen), head=limit, tail=0) if len(seen) > limit else "\n".join(seen)


# ---------------------------------------------------------------------------------------------
# Templates.
# ---------------------------------------------------------------------------------------------


def template_environment(override: Path | None = None) -> Environment:
    """The shipped templates (package data, so a wheel install renders), each replaceable
    by a file of the same name in ``override``. StrictUndefined: a missing field is an
    error, not a blank. Autoescape for HTML only; Markdown escapes through the filters."""
    loaders: list[BaseLoader] = [PackageLoader("suite", "templates")]
    if override is not None:
        if not override.is_dir():
            raise UsageError(f"--templates: not a folder: {override}")
        loaders.insert(0, FileSystemLoader(str(override)))
    env = Environment(
        loader=ChoiceLoader(loaders),
        undefined=StrictUndefined,
        # Jinja matches the name's end: dashboard.html.j2 is HTML.
        autoescape=select_autoescape(["html", "html.j2", "htm", "xml"]),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters.update(
        md=markdown_text,
        fence=fence,
        code=inline_code,
        trim_lines=trim_lines,
        cell=table_cell,
        pyrepr=repr,
        pyassign=py_assign,
        scrub=scrub_text,
    )
    return env
