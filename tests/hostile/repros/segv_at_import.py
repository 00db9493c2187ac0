"""Segfaults while it is imported."""

import ctypes

ctypes.string_at(0)
