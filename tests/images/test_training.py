"""The training image on each MPI flavour: `mpiexec` alone starts PyTorch's DistributedDataParallel across
kompi's containers (no torchrun), the example learns the digits, and a run resumed from its checkpoint ends
exactly where an uninterrupted one does (and one started again once finished reports the same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.images.cluster import render_cluster, running_cluster, write_hostfile
from tests.images.conftest import TRAINING_FLAVORS
from tests.images.podman import exec_in
from tests.training_run import TRAIN_SCRIPT, TrainingRun, parse

pytestmark = pytest.mark.containers
EPOCHS = 12


def train(master: str, *args: str) -> TrainingRun:
    result = exec_in(master, ["mpiexec", "python3", TRAIN_SCRIPT, *args], timeout=300)
    assert result.returncode == 0, f"training failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-3000:]}"
    return parse(result.stdout)


@pytest.mark.parametrize("flavor", TRAINING_FLAVORS)
def test_two_workers_learn_the_digits_and_a_resumed_run_ends_as_an_uninterrupted_one(
    training_images: dict[str, str], flavor: str, tmp_path: Path
) -> None:
    rendered = render_cluster(training_images[flavor], workers=2, run_as_root=False)
    with running_cluster(rendered, tmp_path) as cluster:
        write_hostfile(cluster)
        whole = train(cluster.master, "--epochs", str(EPOCHS), "--checkpoint-dir", "/tmp/whole")
        first_half = train(cluster.master, "--epochs", str(EPOCHS // 2), "--checkpoint-dir", "/tmp/halves")
        second_half = train(cluster.master, "--epochs", str(EPOCHS), "--checkpoint-dir", "/tmp/halves")
        nothing_left = train(cluster.master, "--epochs", str(EPOCHS), "--checkpoint-dir", "/tmp/halves")
    print(f"\n{flavor}: {whole.final_line}; {sum(e.seconds for e in whole.epochs):.1f} s of epochs")
    assert (whole.ranks, whole.hosts, whole.backend, whole.device) == (2, 2, "gloo", "cpu")
    assert [epoch.number for epoch in whole.epochs] == list(range(1, EPOCHS + 1))
    assert whole.final_accuracy is not None and whole.final_accuracy >= 0.9
    assert first_half.resumed_after is None and [e.number for e in first_half.epochs][-1] == EPOCHS // 2
    assert second_half.resumed_after == EPOCHS // 2
    assert [epoch.number for epoch in second_half.epochs] == list(range(EPOCHS // 2 + 1, EPOCHS + 1))
    assert second_half.final_line == whole.final_line
    # a finished run started again trains nothing and reports the checkpoint's model as it was
    assert (nothing_left.resumed_after, nothing_left.epochs) == (EPOCHS, [])
    assert nothing_left.final_line == whole.final_line
