"""What the Triton toolchain can do and where releases live: limits, per-release venvs."""
