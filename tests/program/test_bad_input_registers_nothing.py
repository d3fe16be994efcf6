"""Under `pulumi up`, bad config stops the program before any resource is registered."""

from __future__ import annotations

import pulumi
import pytest

from tests.pulumi_mocks import RecordingMocks, run_program


def test_bad_config_raises_run_error_and_registers_nothing() -> None:
    mocks = RecordingMocks()
    with pytest.raises(pulumi.RunError, match=r"^invalid config kompi:workers = -1: expected a number >= 0$"):
        run_program({"kompi:workers": "-1"}, mocks)
    assert mocks.registrations == []
