"""The data guard: which changes it refuses (those that delete claims) and which it lets through."""

from __future__ import annotations

from unittest import mock

import pytest

from kompi_components import contract
from kompi_components.components.data_guard import DataLossError, _Provider, claim_identities, losses
from kompi_components.impact import Impact, impact_of
from kompi_components.impact.table import BASE, EXAMPLES, changes_of
from kompi_components.render import planned_objects
from tests.stacks import as_config


def identities(values: dict[str, object], version: str | None = None) -> dict:
    if version is None:
        return claim_identities(planned_objects(as_config(values)))
    with mock.patch.object(contract, "KOMPI_VERSION", version):
        return claim_identities(planned_objects(as_config(values)))


def test_it_knows_every_claim_kompi_owns() -> None:
    found = identities(BASE)
    holding = sorted(key for key, identity in found.items() if identity["deletesClaims"])
    assert holding == ["PersistentVolumeClaim team/team-data-train", "StatefulSet team/team-worker"]
    assert found["StatefulSet team/team-master"]["deletesClaims"] is False


def test_a_new_claim_size_replaces_the_workers_and_a_renamed_volume_deletes_its_claim() -> None:
    before = identities(BASE)
    bigger = identities(BASE | {"workerVolume": {"size": "20Gi", "mountPath": "/scratch"}})
    assert losses(before, bigger) == [
        "StatefulSet team/team-worker would be replaced (spec.volumeClaimTemplates changed)"
    ]
    renamed = identities(BASE | {"dataVolumes": [{"name": "train2", "size": "50Gi", "mountPath": "/train"}]})
    assert losses(before, renamed) == ["PersistentVolumeClaim team/team-data-train would be deleted"]


def test_an_upgrade_and_a_bigger_data_volume_lose_nothing() -> None:
    before = identities(BASE)
    assert losses(before, identities(BASE, version="99.0.0")) == []
    grown = identities(BASE | {"dataVolumes": [{"name": "train", "size": "100Gi", "mountPath": "/train"}]})
    assert losses(before, grown) == []


def test_the_guard_agrees_with_the_change_table() -> None:
    """Every example that the table says deletes data is one the guard refuses, and no other."""
    for example in EXAMPLES:
        lost = losses(identities(example.before()), identities(example.after(), example.version))
        assert bool(lost) == (impact_of(changes_of(example)) is Impact.DELETES_DATA), example.key


def test_the_diff_refuses_unless_the_stack_allows_data_loss() -> None:
    provider = _Provider()
    old = {"claims": identities(BASE)}
    new = {"claims": identities(BASE | {"workerVolume": None}), "allowDataLoss": False}
    with pytest.raises(DataLossError, match=r"StatefulSet team/team-worker would be replaced .* kompi:allowDataLoss"):
        provider.diff("data-guard", old, new)
    allowed = provider.diff("data-guard", old, new | {"allowDataLoss": True})
    assert allowed.changes is True and allowed.replaces == []
    same = provider.diff("data-guard", old, {"claims": old["claims"], "allowDataLoss": False})
    assert same.changes is False
