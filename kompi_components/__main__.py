"""``python -m kompi_components``: kompi's own commands (``bin/kompi`` adds the local engine's)."""

import sys

from kompi_components.cli import main

if __name__ == "__main__":
    sys.exit(main())
