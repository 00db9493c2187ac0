"""``repro gate``: may a set of autotune configs ship? Static checks, then the GPU."""
