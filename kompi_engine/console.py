"""What bin/kompi's engine commands print and exit with."""

from __future__ import annotations

import sys

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def say(line: str) -> None:
    """A progress line, on stderr (stdout carries what scripts read)."""
    print(f"[kompi] {line}", file=sys.stderr, flush=True)


def error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
