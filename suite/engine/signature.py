"""Normalize failure text so that one bug on many configs is one signature.

Compiler messages carry things that change from case to case without
changing the bug: paths, temp names, addresses, SSA value numbers, line and
column numbers, and tensor shapes that follow the tile sizes. All of them are
replaced by placeholders, in an order that keeps the replacements from
eating each other.
"""

from __future__ import annotations

import re

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]+"), "0xX"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@~-]+)+/?"), "<path>"),
    (re.compile(r"\btmp[\w-]*"), "<tmp>"),
    (re.compile(r"%[\w.#$-]+"), "%V"),
    (re.compile(r"#[A-Za-z_][\w.]*"), "#A"),
    (re.compile(r"\d+"), "N"),
    (re.compile(r"\s+"), " "),
)

MAX_LENGTH = 200


def normalize(text: str) -> str:
    """The stable form of one line of failure text."""
    for pattern, placeholder in _RULES:
        text = pattern.sub(placeholder, text)
    return text.strip()[:MAX_LENGTH]


def signature_text(*parts: str | None) -> str:
    """Join the parts of a signature, dropping the empty ones."""
    return ":".join(p for p in parts if p)
