"""A reproducer's source carried with what it produced, so that it can be loaded again.

A run and a finding record the source of the reproducer their cases ran: where it came
from (a file, or an entry-point plugin's module), the SHA-256 of its text, and a copy
(a file in the run folder; the text itself in a finding). ``report``, ``bisect`` and
``replay`` load that exact code again, under any release's venv and on another machine,
through :func:`reopen`: the original when it is still there unchanged, else the copy.

A plugin is carried as its module's file: a plugin spread over several modules of its
package is loaded again by module name only, where the package is installed.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suite.engine.discover import Found, from_source, select
from suite.errors import UsageError
from suite.files import cache_root, lies_under, own_folder, write_replacing

SOURCES = "sources"


@dataclass(frozen=True)
class CarriedSource:
    """Where a reproducer came from, the hash of its text, and a copy of that text."""

    origin: str  # the file's absolute path, or the plugin's module name
    kind: str  # "file" or "module"
    sha256: str
    copy: str = ""  # a copy's path, relative to the record's folder when not absolute
    text: str = ""  # the text itself (findings carry it, so the file is self-contained)

    def to_json(self, with_text: bool = False) -> dict[str, str]:
        record = asdict(self)
        if not with_text:
            record.pop("text")
        return {k: v for k, v in record.items() if v}

    @classmethod
    def from_json(cls, record: Mapping[str, object] | None) -> CarriedSource | None:
        if not record or not record.get("sha256"):
            return None
        known = set(cls.__dataclass_fields__)
        return cls(**{k: str(v) for k, v in record.items() if k in known})

    @property
    def name(self) -> str:
        """A file name for the copy: the original's, or the module's last part."""
        if self.kind == "file":
            return Path(self.origin).name
        return self.origin.rsplit(".", 1)[-1] + ".py"


def _digest(text: bytes) -> str:
    """The SHA-256 of ``text``, its first 40 hex digits: 160 bits identify a file, and a
    longer hex run is taken for a secret (and redacted) by ``suite.engine.scrub``."""
    return hashlib.sha256(text).hexdigest()[:40]


def _module_file(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec and spec.origin and spec.origin.endswith(".py") else None


def capture_source(source: dict[str, str]) -> CarriedSource | None:
    """The carried form of a child's ``source`` (``{"path": ...}`` or ``{"module": ...}``),
    with its text; ``None`` when the file cannot be read."""
    if "path" in source:
        path, kind, origin = Path(source["path"]).resolve(), "file", ""
        origin = str(path)
    else:
        found = _module_file(source["module"])
        if found is None:
            return None
        path, kind, origin = found, "module", source["module"]
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return CarriedSource(origin, kind, _digest(data), text=data.decode("utf-8", "replace"))


def keep_copy(carried: CarriedSource, folder: Path) -> CarriedSource:
    """Write ``carried``'s text under ``folder/sources/`` (once per hash) and point at it,
    relative to ``folder``."""
    relative = Path(SOURCES) / f"{carried.sha256[:12]}-{carried.name}"
    target = folder / relative
    if not target.is_file():
        own_folder(folder, SOURCES)  # a link planted in its place is refused, not followed
        write_replacing(target, carried.text)
    return CarriedSource(carried.origin, carried.kind, carried.sha256, str(relative))


def reopen(carried: CarriedSource, base: Path | None = None) -> tuple[dict[str, str], str]:
    """A child ``source`` that loads exactly the carried code, and a note ('' when the
    original is used unchanged).

    The original when its text still has the carried hash; else the copy (``copy``
    relative to ``base``, or the embedded text, written once under the cache folder).
    Raises ``LookupError`` when neither is available.
    """
    if carried.kind == "file":
        original: Path | None = Path(carried.origin)
    else:
        original = _module_file(carried.origin)
    if original is not None and original.is_file():
        if _digest(original.read_bytes()) == carried.sha256:
            if carried.kind == "file":
                return {"path": str(original)}, ""
            return {"module": carried.origin}, ""
        changed = (
            f"{carried.origin} changed since; loading the copy that ran ({carried.sha256[:12]})"
        )
    else:
        changed = f"{carried.origin} is not here; loading the copy that ran ({carried.sha256[:12]})"
    if carried.copy and base is not None and not Path(carried.copy).is_absolute():
        # Only a copy this suite keeps: under the record's own sources/ folder, never a
        # file a crafted record names elsewhere (whatever its hash).
        copy = base / carried.copy
        mine = lies_under(copy, base / SOURCES) and copy.is_file()
        if mine and _digest(copy.read_bytes()) == carried.sha256:
            return {"path": str(copy.resolve())}, changed
    if carried.text and _digest(carried.text.encode()) == carried.sha256:
        written = keep_copy(carried, cache_root())
        return {"path": str(cache_root() / written.copy)}, changed
    raise LookupError(f"the source of {carried.origin} ({carried.sha256[:12]}) is not available")


def reproducer_for(
    repro_id: str, record: dict[str, Any] | None, base: Path | None = None
) -> tuple[Found, str]:
    """The reproducer ``repro_id`` as a run or a finding recorded it, and a note on where it
    was loaded from ('' for the original, unchanged).

    Records made before sources were carried name only the id: it is looked up in the
    catalogue. Raises ``UsageError`` when the code that ran cannot be found.
    """
    carried = CarriedSource.from_json(record)
    if carried is None:
        found = [f for f in select([repro_id]) if f.repro.id == repro_id]
        note = ""
    else:
        try:
            source, note = reopen(carried, base)
        except LookupError as exc:
            raise UsageError(str(exc)) from None
        found = [f for f in from_source(source, carried.origin) if f.repro.id == repro_id]
    if not found:
        raise UsageError(f"the reproducer {repro_id!r} is not defined by its recorded source")
    return found[0], note
