"""Turns raw stack config (``kompi:*`` keys, as Pulumi hands them over) into a KompiConfig.

Pulumi gives a program every config value as a string (objects as JSON); the offline render reads the
stack file and converts it the same way (``stack_files.as_pulumi_strings``), so both paths parse here.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Mapping

from pydantic import ValidationError

from kompi_components.config.checks import check_cross_field_rules
from kompi_components.config.errors import MISSING, PREFIX, ConfigError
from kompi_components.config.keys import python_names
from kompi_components.config.schema import KompiConfig

# pydantic error types -> what the user should have written.
_EXPECTATIONS: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "an object (key: value mapping)",
    "model_type": "an object (key: value mapping)",
    "list_type": "a list",
    "missing": "a value (this key is required)",
}


def _accepts_only_str(annotation: object) -> bool:
    return annotation is str


def _accepts_str(annotation: object) -> bool:
    if annotation is str:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_accepts_str(arg) for arg in typing.get_args(annotation))
    return False


def accepts_null(key: str) -> bool:
    """Whether the top-level key (with or without ``kompi:``) takes null; unknown keys say yes (checked later)."""
    field = python_names(KompiConfig).get(key.removeprefix(f"{PREFIX}:"))
    if field is None:
        return True
    annotation = KompiConfig.model_fields[field].annotation
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(
        annotation
    )


def _decode(field_name: str, value: object) -> object:
    """Decode a Pulumi config string into the JSON value it stands for, where the field wants one."""
    if not isinstance(value, str):
        return value
    annotation = KompiConfig.model_fields[field_name].annotation
    if _accepts_only_str(annotation):
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if _accepts_str(annotation) and decoded is not None and not isinstance(decoded, str):
        return value
    return decoded


def _dotted(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _first_error(error: ValidationError) -> ConfigError:
    detail = error.errors(include_url=False)[0]
    location = tuple(detail["loc"])
    # A failed model validator reports no field; drop pydantic's union branch names from the path.
    location = tuple(part for part in location if not (isinstance(part, str) and part.startswith("function-")))
    key = _dotted(location)
    kind = detail["type"]
    value = MISSING if kind == "missing" else detail.get("input")
    if kind == "extra_forbidden":
        return ConfigError(key, value, "no such key here (check its spelling)")
    if kind in _EXPECTATIONS:
        expected = _EXPECTATIONS[kind]
    elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        limit = detail.get("ctx", {})
        bound = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}[kind]
        expected = f"a number {bound} {next(iter(limit.values()))}"
    elif kind == "literal_error":
        expected = f"one of {detail.get('ctx', {}).get('expected', '')}"
    elif kind == "string_too_short":
        expected = "a non-empty string"
    elif kind == "value_error":
        expected = str(detail.get("ctx", {}).get("error", detail["msg"]))
    else:
        expected = detail["msg"].lower()
    return ConfigError(key, value, expected)


def _check_known_keys(raw: Mapping[str, object]) -> None:
    known = python_names(KompiConfig)
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=2, cutoff=0.6)
            hint = f" (did you mean {' or '.join(f'{PREFIX}:{name}' for name in close)}?)" if close else ""
            raise ConfigError(key, raw[key], f"a known key{hint}; the README's config table lists them")


def load_config(raw: Mapping[str, object]) -> KompiConfig:
    """Validate the ``kompi:*`` config (keys with or without the ``kompi:`` prefix).

    Raises ConfigError, one line naming key, value and expectation, for the first problem found.
    """
    unprefixed = {key.split(":", 1)[1] if key.startswith(f"{PREFIX}:") else key: value for key, value in raw.items()}
    _check_known_keys(unprefixed)
    names = python_names(KompiConfig)
    data = {key: _decode(names[key], value) for key, value in unprefixed.items()}
    try:
        config = KompiConfig.model_validate(data, by_alias=True)
    except ValidationError as error:
        raise _first_error(error) from None
    check_cross_field_rules(config)
    return config
