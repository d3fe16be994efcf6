"""The README documents every config key (its table is the schema's) and the commands that exist."""

from __future__ import annotations

from kompi_components.config.reference import END, START, config_table, rows
from kompi_components.config.schema import KompiConfig
from tests.stacks import REPO

README = (REPO / "README.md").read_text()


def test_readme_config_table_is_the_one_generated_from_the_schema() -> None:
    table = README[README.index(START) : README.index(END) + len(END)]
    assert table == config_table(), "run: bin/kompi config-table, and paste it into README.md"


def test_every_config_key_has_a_row_with_a_description() -> None:
    keys = {key for key, *_ in rows()}
    assert {field.alias for field in KompiConfig.model_fields.values()} <= keys
    assert all(description for _, _, _, description, _ in rows())


def test_readme_gives_the_two_fresh_machine_commands() -> None:
    assert "bash .ci/run" in README
    assert "bin/kompi render --stack dev" in README
    assert (REPO / "Pulumi.dev.yaml").exists()
