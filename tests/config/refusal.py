"""The check every bad-config test makes: refused with one line naming key, value and expectation.

A table entry's keys are kompi keys without the prefix, except a key that already has a namespace
(``kompy:workers``, ``kubernetes:context``) or is marked with ``bare()``: those go in as written.
"""

from __future__ import annotations

import json

import pulumi
import pytest

from kompi_components.config import ConfigError, load_config
from kompi_components.config.namespaces import kompi_config
from tests.pulumi_mocks import RecordingMocks, run_program

_BARE = "bare:"


def bare(key: str) -> str:
    """A table key that goes into the stack config without any namespace."""
    return f"{_BARE}{key}"


def stack_config(values: dict[str, object]) -> dict[str, str]:
    """A table entry as the whole stack config Pulumi hands over (every namespace, values as strings)."""
    config: dict[str, str] = {}
    for key, value in values.items():
        name = key.removeprefix(_BARE) if key.startswith(_BARE) else key if ":" in key else f"kompi:{key}"
        config[name] = value if isinstance(value, str) else json.dumps(value)
    return config


def _check_line(text: str, message: str) -> None:
    assert "\n" not in text
    assert text.startswith("invalid config ")
    assert message in text


def assert_refused_with_one_line(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(kompi_config(stack_config(values)))
    _check_line(str(caught.value), message)


def assert_program_refuses_before_registering(values: dict[str, object], message: str) -> None:
    """Under `pulumi up` (mocks): a RunError with the same line, and not one resource registered."""
    mocks = RecordingMocks()
    with pytest.raises(pulumi.RunError) as caught:
        run_program(stack_config(values), mocks)
    _check_line(str(caught.value), message)
    assert mocks.registrations == []
