"""``python -m suite.capture ...`` is ``repro capture ...``: this process becomes the
``repro`` command (the command package imports this one, not the other way round)."""

import os
import sys

os.execv(sys.executable, [sys.executable, "-m", "suite.cli.main", "capture", *sys.argv[1:]])
