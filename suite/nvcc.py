"""Building and running CUDA reproducer programs with nvcc, at the path reproducer files
import (``suite.nvcc``); the code lives in :mod:`suite.cuda.nvcc`.
"""

from __future__ import annotations

from suite.cuda.nvcc import (
    EXIT_ENCODE,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_TIMEOUT,
    EXIT_WRONG,
    CudaRunError,
    NvccError,
    compile_checked,
    compile_cuda,
    cuda_arch,
    executable,
    run_cuda,
)

__all__ = [
    "EXIT_ENCODE",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_TIMEOUT",
    "EXIT_WRONG",
    "CudaRunError",
    "NvccError",
    "compile_checked",
    "compile_cuda",
    "cuda_arch",
    "executable",
    "run_cuda",
]
