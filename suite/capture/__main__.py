"""``python -m suite.capture ...`` is ``repro capture ...``: this process becomes the
``repro`` command (the command package imports this one, not the other way round)."""

import os
import sys

from suite.children import Role, child_argv

os.execv(sys.executable, child_argv(sys.executable, Role.REPRO, "capture", *sys.argv[1:]))
