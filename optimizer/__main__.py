"""``python -m optimizer ...`` is ``perfmodel optimize ...``."""

import sys

from perfmodel.cli import main

if __name__ == "__main__":
    sys.exit(main(["optimize", *sys.argv[1:]]))
