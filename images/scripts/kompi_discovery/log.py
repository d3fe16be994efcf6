"""The commands' messages: one line on stderr each, after the name the program was called by."""

from __future__ import annotations

import sys
from pathlib import Path


def log(message: str) -> None:
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr, flush=True)
