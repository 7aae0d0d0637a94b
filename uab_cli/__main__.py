"""``python -m uab_cli``: the ``uab`` command (what a vLLM-spawned process or a missing
console script can still run)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
