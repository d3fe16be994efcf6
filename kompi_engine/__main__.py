"""``bin/kompi``: kompi's commands and the local engine's (engine, local, up, preview, refresh, destroy)."""

import sys

from kompi_engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
