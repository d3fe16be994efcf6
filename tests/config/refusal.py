"""The check every bad-config test makes: refused with one line naming key, value and expectation."""

from __future__ import annotations

import pytest

from kompi_components.config import ConfigError, load_config
from tests.stacks import as_config


def assert_refused_with_one_line(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(as_config(values))
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith("invalid config kompi:")
    assert message in text
