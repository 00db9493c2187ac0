"""The CUDA side: the real driver's ``cuTensorMapEncodeTiled``, probed in a child process.

The TMA model, nvcc helpers and static check that reproducer files import stay at
``suite.tma_model``, ``suite.nvcc`` and ``suite.static_check`` (public toolkit paths).
"""
