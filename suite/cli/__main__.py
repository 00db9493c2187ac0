"""``python -m suite.cli.main.main``: the ``repro`` command."""

import sys

from suite.cli.main import main

sys.exit(main())
