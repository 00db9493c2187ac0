"""repro reduce: the smallest kernel that still fails the same way (AST passes, C-Vise anchor)."""
