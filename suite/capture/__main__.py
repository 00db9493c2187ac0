"""``python -m suite.capture ...`` is ``repro capture ...``."""

import sys

from suite.cli.main import main

sys.exit(main(["capture", *sys.argv[1:]]))
