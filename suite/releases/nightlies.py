"""From two nightly builds to the upstream commits between them.

A nightly wheel's version carries the git hash it was built from, in its local part
(``3.5.0+git1a2b3c4d``, ``3.6.0.dev20251101+gitabcdef0``). When a matrix or a bisection
over such builds sees a bug enter or leave between two of them, the two hashes name the
commit range, and upstream's compare page lists it: what a maintainer bisects further
with their own tools.

Builds are ordered oldest first by their public version (a ``.devYYYYMMDD`` orders by
date); builds whose versions differ only in the hash keep the order they were given in
(the command line's, or a wheelhouse's by file time: ``suite.toolchain.venvs.wheels_in``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

UPSTREAM = "https://github.com/triton-lang/triton"
_HASH = re.compile(r"(?:^|\.)git([0-9a-f]{7,40})(?:\.|$)")


def commit_of(version: str) -> str | None:
    """The git hash a build's version carries (``3.5.0+git1a2b3c4d`` -> ``1a2b3c4d``)."""
    try:
        local = Version(version).local
    except InvalidVersion:
        return None
    found = _HASH.search(local or "")
    return found.group(1) if found else None


def chronological(labels: Sequence[str]) -> list[str]:
    """``labels`` oldest first: by public version, ties kept in the order given."""
    return sorted(labels, key=lambda label: Version(Version(label).public))


@dataclass(frozen=True)
class CommitRange:
    """The upstream commits between an older and a newer build: the change is in
    ``(older_commit, newer_commit]``."""

    older: str
    newer: str
    older_commit: str
    newer_commit: str

    @property
    def url(self) -> str:
        return f"{UPSTREAM}/compare/{self.older_commit}...{self.newer_commit}"

    def line(self) -> str:
        return (
            f"commits {self.older_commit}..{self.newer_commit} "
            f"(after {self.older}, up to {self.newer}): {self.url}"
        )

    def to_json(self) -> dict[str, str]:
        return {
            "older": self.older,
            "newer": self.newer,
            "older_commit": self.older_commit,
            "newer_commit": self.newer_commit,
            "compare": self.url,
        }


def commit_range(one: str, other: str, order: Sequence[str]) -> CommitRange | None:
    """The commits between two builds (either order; ``order`` is oldest first), when
    both versions carry a hash and the hashes differ; else None."""
    older, newer = sorted((one, other), key=list(order).index)
    old_hash, new_hash = commit_of(older), commit_of(newer)
    if not old_hash or not new_hash or old_hash == new_hash:
        return None
    return CommitRange(older, newer, old_hash, new_hash)
