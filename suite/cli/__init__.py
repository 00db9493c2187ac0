"""The ``repro`` command: one module per command family, each a thin door onto the packages."""
