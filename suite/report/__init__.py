"""``repro report``: from a finding to upstream-ready files, verified in a clean venv."""
