"""docs/changes.md is the generated table, every config key has an example, and no upgrade loses data."""

from __future__ import annotations

import pytest

from kompi_components.config.reference import rows
from kompi_components.impact import Impact, compare, impact_of
from kompi_components.impact.table import END, EXAMPLES, START, change_table, changes_of
from kompi_components.render import planned_objects
from kompi_components.stack_files import read_stack_config
from tests.stacks import REPO, as_config, stack_names

DOC = REPO / "docs" / "changes.md"


def test_docs_table_is_the_generated_one() -> None:
    text = DOC.read_text()
    assert text[text.index(START) : text.index(END) + len(END)] == change_table(), (
        "run: bin/kompi change-table, and paste it into docs/changes.md"
    )


def test_every_config_key_has_an_example() -> None:
    documented = {example.key.replace("[0]", "[]") for example in EXAMPLES}
    # A key with keys under it (masterPod, ...) is covered by its own keys' rows, except where adding or
    # removing the whole entry is a change of its own.
    parents = {key.rsplit(".", 1)[0].removesuffix("[]") for key, *_ in rows() if "." in key}
    own_rows = {"appCode", "sharedClaims", "workerVolume", "dataVolumes", "dataPreparation"}
    leaves = {key for key, *_ in rows()} - (parents - own_rows)
    missing = leaves - documented
    assert not missing, f"add an example of each to kompi_components/impact/table.py: {sorted(missing)}"


@pytest.mark.parametrize("stack", stack_names())
def test_a_kompi_upgrade_replaces_nothing_and_restarts_no_pod(stack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kompi_components import contract

    before = planned_objects(read_stack_config(REPO, stack))
    monkeypatch.setattr(contract, "KOMPI_VERSION", "99.0.0")
    after = planned_objects(read_stack_config(REPO, stack))
    changes = compare(before, after)
    assert changes, "the version label should still show on the objects"
    assert impact_of(changes) is Impact.IN_PLACE, [str(change) for change in changes]


def test_the_upgrade_row_of_the_table_updates_in_place() -> None:
    (upgrade,) = [example for example in EXAMPLES if example.version]
    assert impact_of(changes_of(upgrade)) is Impact.IN_PLACE


def test_a_kompi_upgrade_of_a_queued_one_shot_run_starts_no_new_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A queued run's pod group follows what its pods are made of, not the objects' version label: an upgrade that
    renders the same pods (the image tag pinned) replaces no Job, so the command does not run again."""
    from kompi_components import contract

    run = {"imageTag": "pinned", "queue": "team-a", "oneShot": {"enabled": True, "command": "mpiexec true"}}
    before = planned_objects(as_config(run))
    monkeypatch.setattr(contract, "KOMPI_VERSION", "99.0.0")
    changes = compare(before, planned_objects(as_config(run)))
    assert changes, "the version label should still show on the objects"
    assert impact_of(changes) is Impact.IN_PLACE, [str(change) for change in changes]
