"""``python -m suite.cli``: the ``repro`` command."""

import sys

from suite.cli.main import main

sys.exit(main())
