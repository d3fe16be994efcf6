"""The README documents every config key (its table is the schema's) and the commands that exist."""

from __future__ import annotations

import asyncio

import pulumi
import yaml

from kompi_components.config.reference import END, START, config_table, rows
from kompi_components.config.schema import KompiConfig
from tests.pulumi_mocks import RecordingMocks, RecordingMonitor
from tests.readme_blocks import README, blocks
from tests.stacks import REPO
from tests.training_run import parse


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


def test_the_yaml_shown_is_the_example_programs_own_text() -> None:
    (shown,) = blocks("The component", "yaml")
    example = (REPO / "examples" / "yaml" / "Pulumi.yaml").read_text()
    lines = [line for line in example.splitlines(keepends=True) if not line.strip().startswith("#")]
    assert shown in "".join(lines), "the README's YAML is a slice of examples/yaml/Pulumi.yaml (comments aside)"


def test_the_python_example_runs_as_written() -> None:
    (example,) = blocks("The component", "python")
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    mocks = RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="train", stack="dev", preview=False, monitor=RecordingMonitor(mocks))
    first_job: list[str] = []

    @pulumi.runtime.test
    def program() -> None:
        pulumi.runtime.set_all_config({"train:kubeconfig": "apiVersion: v1\nkind: Config\n"}, ["train:kubeconfig"])
        scope: dict[str, object] = {}
        exec(compile(example, "README.md", "exec"), scope)
        scope["train"].first_job.apply(first_job.append)  # type: ignore[attr-defined]

    try:
        program()
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    workers = mocks.named("kubernetes:apps/v1:StatefulSet", "train-statefulset-train-worker")
    assert workers.inputs["metadata"]["namespace"] == "ml-team"
    assert workers.inputs["spec"]["replicas"] == 4
    assert workers.provider.split("::")[3] == "gpu-cluster"
    assert first_job == ["kubectl exec -n ml-team train-master-0 -c mpi -- mpiexec -n 32 hostname"]


def test_the_training_section_shows_a_whole_run_of_the_train_stack() -> None:
    """The output shown is a run as tests/training_run.py reads real ones: the train stack's two workers, every
    epoch of train.py's default 20, an accuracy the tests also demand; and the command names the stack's pod."""
    (command, output) = (blocks("Run a training job", "sh")[0], blocks("Run a training job", "")[0])
    run = parse(output)
    stack = yaml.safe_load((REPO / "Pulumi.train.yaml").read_text())["config"]
    assert (run.ranks, run.hosts) == (stack["kompi:workers"], stack["kompi:workers"])
    assert [epoch.number for epoch in run.epochs] == list(range(1, 21))
    assert run.final_accuracy is not None and run.final_accuracy >= 0.9
    assert f"-n {stack['kompi:namespace']} {stack['kompi:clusterName']}-master-0" in command
    assert "/checkpoints/" in command and stack["kompi:dataVolumes"][0]["mountPath"] == "/checkpoints"
