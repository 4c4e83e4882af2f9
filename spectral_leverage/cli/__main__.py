"""``python -m spectral_leverage.cli``: the ``spectral-leverage`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
