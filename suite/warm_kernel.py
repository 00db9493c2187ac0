"""The kernel that :func:`suite.tritonc.warm_up` compiles.

It lives at the top of a module of its own because Triton 3.0 to 3.3 look a kernel's
names up in its module's globals only: the same kernel defined inside a function (with
``triton.language`` imported there) failed to compile with ``NameError('tl is not
defined')``, and every case of a run under those releases then started a fresh
interpreter. Imported only by the warm-up, so that importing :mod:`suite.tritonc` does
not import Triton.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1)
