"""``repro replay``: Triton's MLIR crash reproducer, one pass per isolated child, then reduced."""
