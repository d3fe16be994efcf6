"""The one error type that bad configuration raises: one line naming key, value and expectation."""

from __future__ import annotations

import json

PREFIX = "kompi"


def show_value(value: object) -> str:
    """A value as the user would have written it (JSON-ish, short)."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ConfigError(ValueError):
    """Invalid stack configuration, raised before any resource is registered."""

    def __init__(self, key: str, value: object, expected: str, *, in_kompi: bool = True) -> None:
        # in_kompi=False: a key outside the kompi namespace, shown as written.
        self.key = key if key.startswith(f"{PREFIX}:") or not in_kompi else f"{PREFIX}:{key}"
        self.value = value
        self.expected = expected
        super().__init__(f"invalid config {self.key} = {show_value(value)}: expected {expected}")


class MissingValue:
    """Stands for a required key that was not given (shown as <missing>)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = MissingValue()
