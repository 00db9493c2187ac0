"""Triton's hash of its own install, computed once per install instead of once per process.

Every compile keys Triton's cache on ``triton_key()``: a SHA-256 of Triton's compiler,
backends and language sources and of ``libtriton.so`` (500 MB in 3.9), computed at a
process's first compile. Each case runs in a fresh process, so each paid it again (0.5-0.6
CPU s, more than most compiles). The value depends on those files alone, so it is kept in
the suite's cache folder under a digest of their names, sizes and modification times (how
Python checks a ``.pyc``), and a process whose install has a kept value gets it as Triton
hands it to its own compile workers (``triton._compile_warmup_pool``): the module attribute
replaced by a function that returns it. The kernels' hashes are those Triton computes;
every case still compiles into a cache folder of its own.

Only processes that have run no reproducer code write it (:func:`remember`: the environment
probe, the warm template before it imports any reproducer); a case's process only reads it
(:func:`recall`), and only into a Triton whose function is still Triton's own.
Standard library and triton only, like ``suite.engine.child``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

from suite.files import cache_root

# Where each release defines it: 3.5 on, then 3.0-3.4.
_HOMES = ("triton.runtime.cache", "triton.compiler.compiler")
# What ``triton_key`` reads, under the package folder (the file defining it is among them).
_HASHED = ("compiler", "backends", "language", "runtime/cache.py", "_C")
# A kept key is a version and a few hundred hex digests; anything longer is not one.
_LARGEST = 1 << 20


def _install() -> Path | None:
    """The folder of the Triton this interpreter imports, without importing it."""
    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations)))


def _identity(package: Path) -> str:
    """A digest of the path, size and modification time of every file the key hashes."""
    digest = hashlib.sha256(str(package.resolve()).encode())
    for part in _HASHED:
        top = package / part
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            facts = path.stat()
            digest.update(f"{path.relative_to(package)}\0{facts.st_size}\0".encode())
            digest.update(f"{facts.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _kept(package: Path) -> Path:
    return cache_root() / "triton-key" / _identity(package)


def _key_function() -> tuple[object, Callable[[], str]] | None:
    """The module defining ``triton_key`` and Triton's own function (imported here)."""
    for home in _HOMES:
        with contextlib.suppress(ImportError):
            module = importlib.import_module(home)
            function = getattr(module, "triton_key", None)
            if callable(function) and hasattr(function, "cache_info"):
                return module, function
    return None


def remember() -> None:
    """Keep this install's key if none is kept yet (computing it, as a first compile would)."""
    with contextlib.suppress(Exception):  # only time is at stake: a failure changes nothing
        _remember()


def recall() -> None:
    """Give this process's Triton its kept key, if its install has one and its function is
    still Triton's own, not yet called: every module that holds the function gets the value."""
    with contextlib.suppress(Exception):  # only time is at stake: a failure changes nothing
        _recall()


def _remember() -> None:
    package = _install()
    if package is None:
        return
    kept = _kept(package)
    if kept.is_file():
        return
    found = _key_function()
    if found is None:
        return
    value = found[1]()
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(f".{kept.name}.{os.getpid()}")
    partial.write_text(value)
    os.replace(partial, kept)


def _recall() -> None:
    package = _install()
    if package is None:
        return
    found = _key_function()
    if found is None:
        return
    original = found[1]
    if original.cache_info().currsize:  # type: ignore[attr-defined]
        return  # computed already
    try:
        with _kept(package).open(encoding="utf-8", errors="replace") as kept:
            value = kept.read(_LARGEST + 1)
    except OSError:  # none kept, or a file changed while it was read
        return
    if not value or len(value) > _LARGEST:
        return  # not a key (about 2 kB): Triton computes its own

    def triton_key() -> str:
        return value

    for name, module in list(sys.modules.items()):
        if name.startswith("triton") and getattr(module, "triton_key", None) is original:
            module.triton_key = triton_key  # type: ignore[attr-defined]
