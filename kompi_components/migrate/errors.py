"""The one error type of the import: one line naming the kube-openmpi key and the problem."""

from __future__ import annotations


class ValuesError(ValueError):
    """A values file the import cannot translate (exit code 2, nothing written)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")
