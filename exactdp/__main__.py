"""``python -m exactdp``: the command line."""

import sys

from exactdp.cli import main

if __name__ == "__main__":
    sys.exit(main())
