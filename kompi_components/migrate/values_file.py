"""Reads kube-openmpi values files and merges them the way `helm template -f a -f b` does."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kompi_components.migrate.errors import ValuesError

Values = dict[str, Any]


def read_values(path: Path) -> Values:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ValuesError(str(path), f"cannot read it: {error.strerror} (looked for {path.resolve()})") from None
    except yaml.YAMLError as error:
        raise ValuesError(str(path), f"not valid YAML: {str(error).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValuesError(str(path), "expected a mapping of values at the top level")
    return data


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> Values:
    """Helm's rule: mappings merge key by key, anything else is replaced, null removes the key."""
    merged: Values = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_all(paths: list[Path]) -> Values:
    values: Values = {}
    for path in paths:
        values = merge(values, read_values(path))
    return values
