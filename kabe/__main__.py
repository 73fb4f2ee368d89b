"""`python -m kabe ...`: the same entry point as the `kabe` console script (pyproject's [project.scripts])."""

import sys

from kabe.cli import main

if __name__ == "__main__":
    sys.exit(main())
