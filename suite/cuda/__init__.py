"""The CUDA TMA domain in one package.

- :mod:`.model` (the descriptor ``cuTensorMapEncodeTiled`` takes: enums, arguments, verdict,
  sources), :mod:`.footprint` (what a box takes in memory), :mod:`.rules` (the documented
  and observed rules, and ``check``): the pure-Python model;
- :mod:`.static_check`: a TMA copy's limits (the descriptor, the buffer it lands in, the
  barrier's byte count) before anything is compiled;
- :mod:`.nvcc`: building and running the CUDA C++ reproducer programs;
- :mod:`.driver`: the real driver's ``cuTensorMapEncodeTiled``, probed in a child process;
- :mod:`.differential`: the model against the driver (``bench/tma_differential.py``).

Reproducer files import the model, the static check and nvcc at their public toolkit paths,
``suite.tma_model``, ``suite.static_check`` and ``suite.nvcc``, which re-export them.
"""
