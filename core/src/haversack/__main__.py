"""``python -m haversack``: the ``haversack`` command line."""

from __future__ import annotations

import sys

from haversack.cli import main

if __name__ == "__main__":
    sys.exit(main())
