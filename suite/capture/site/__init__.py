"""The folder ``repro capture`` puts on the program's PYTHONPATH (standard library only)."""
