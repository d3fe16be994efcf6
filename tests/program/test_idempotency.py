"""With the same Pulumi state, two runs register identical inputs, key material included."""

from __future__ import annotations

from typing import Any

from tests.pulumi_mocks import RecordingMocks, run_program, unwrap_secrets
from tests.stacks import EVERY_FEATURE, as_config


def _inputs(mocks: RecordingMocks) -> dict[tuple[str, str], dict[str, Any]]:
    """Inputs by resource (registration order is asynchronous, so not compared)."""
    return {(r.type_, r.name): unwrap_secrets(r.inputs) for r in mocks.registrations}


def test_two_runs_with_the_same_state_register_identical_inputs() -> None:
    config = as_config(EVERY_FEATURE)
    first = _inputs(run_program(config, RecordingMocks(state_seed="kept")))
    second = _inputs(run_program(config, RecordingMocks(state_seed="kept")))
    assert first == second
    secret = first[("kubernetes:core/v1:Secret", "full-secret-full-ssh")]
    assert secret["stringData"]["id_ecdsa"].startswith("-----BEGIN EC PRIVATE KEY-----")


def test_new_random_state_gives_new_keys_and_nothing_else_changes() -> None:
    first = _inputs(run_program({}, RecordingMocks(state_seed="one")))
    second = _inputs(run_program({}, RecordingMocks(state_seed="two")))
    assert first.keys() == second.keys()
    changed = [name for (type_, name), inputs in first.items() if second[(type_, name)] != inputs]
    assert changed == ["kompi-secret-kompi-ssh"]
