"""A TMA copy's documented limits, at the path reproducer files import
(``suite.static_check``); the checks live in :mod:`suite.cuda.static_check`.
"""

from __future__ import annotations

from suite.cuda.static_check import (
    BUFFER_OVERFLOW,
    BUFFER_SOURCE,
    TX_BYTES_MISMATCH,
    TX_SOURCE,
    LimitViolation,
    check_tma_copy,
    enforce_tma_copy,
)

__all__ = [
    "BUFFER_OVERFLOW",
    "BUFFER_SOURCE",
    "TX_BYTES_MISMATCH",
    "TX_SOURCE",
    "LimitViolation",
    "check_tma_copy",
    "enforce_tma_copy",
]
