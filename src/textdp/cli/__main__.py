"""``python -m textdp.cli`` = the ``textdp`` console script."""

import sys

from textdp.cli import main

sys.exit(main())
