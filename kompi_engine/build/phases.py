"""CI's phase table: each phase appends one row to the file named by $KOMPI_PHASES (bin/phases.sh prints it)."""

from __future__ import annotations

import os
import time


def record(name: str, started: float, note: str = "", ended: float | None = None) -> None:
    """Append ``NAME<TAB>START<TAB>END<TAB>NOTE`` (epoch seconds) when $KOMPI_PHASES names a file."""
    path = os.environ.get("KOMPI_PHASES")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as rows:
        rows.write(f"{name}\t{started:.0f}\t{(time.time() if ended is None else ended):.0f}\t{note}\n")
