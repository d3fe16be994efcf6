"""Small conversions of kube-openmpi values, each failing with the key's path."""

from __future__ import annotations

from typing import Any

from kompi_components.migrate.errors import ValuesError


def text(value: Any, path: str) -> str:
    """A string value; YAML numbers (tag: 1.0) become their text."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValuesError(path, f"expected a string, got {value!r}")
    return str(value)


def whole_number(value: Any, path: str, what: str) -> int:
    """An integer written as a number or a string of digits ("120")."""
    if isinstance(value, bool):
        raise ValuesError(path, f"expected {what}, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ValuesError(path, f"expected {what}, got {value!r}")


def flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValuesError(path, f"expected true or false, got {value!r}")
    return value
