"""What Pulumi's dynamic provider server reports for a failed call of kompi's providers: kompi's one line for a
KompiError, the whole traceback for anything else (a bug)."""

from __future__ import annotations

import traceback

import pulumi.dynamic
import pytest

from kompi_components.components.data_guard import DataLossError
from kompi_components.components.dynamic_provider import KompiProvider
from kompi_components.kube.rollout import RolloutError


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(traceback, "format_exc", traceback.format_exc)  # restored after the test
    provider = KompiProvider()
    provider.configure(pulumi.dynamic.ConfigureRequest(config=None))  # type: ignore[arg-type]
    provider.configure(pulumi.dynamic.ConfigureRequest(config=None))  # type: ignore[arg-type]  (a second provider)


def _reported(error: Exception) -> str:
    try:
        raise error
    except Exception:
        return traceback.format_exc()  # as pulumi.dynamic's server does


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            RolloutError("StatefulSet w: 2 of 2 pods cannot start"),
            "RolloutError: StatefulSet w: 2 of 2 pods cannot start",
        ),
        (DataLossError("refused: ..."), "DataLossError: refused: ..."),
    ],
)
def test_a_kompi_error_is_its_one_line(error: Exception, line: str) -> None:
    assert _reported(error) == line


@pytest.mark.usefixtures("configured")
def test_any_other_error_keeps_its_traceback() -> None:
    reported = _reported(KeyError("template"))
    assert reported.startswith("Traceback (most recent call last):") and reported.endswith("KeyError: 'template'\n")


def test_without_configure_a_kompi_error_is_a_traceback_as_before() -> None:
    """The program's own process (bin/kompi, the provider's gRPC server) is never configured so."""
    assert _reported(RolloutError("x")).startswith("Traceback")
