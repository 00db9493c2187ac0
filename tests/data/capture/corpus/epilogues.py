"""Epilogue helpers of the corpus's kernels, in a module of their own: a kernel that calls
``epilogues.activation(...)`` reaches a ``@triton.jit`` function of another module."""

import triton
import triton.language as tl


@triton.jit
def leaky_relu(x, slope):
    return tl.where(x >= 0, x, x * slope)


@triton.jit
def activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x, 0.01)
    elif ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    return x
