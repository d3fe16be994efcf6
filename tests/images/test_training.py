"""The training image on each MPI flavour: `mpiexec` alone starts PyTorch's DistributedDataParallel across
kompi's containers (no torchrun), the example learns the digits, and a run resumed from its checkpoint ends
exactly where an uninterrupted one does (and one started again once finished reports the same)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.images.cluster import render_cluster, running_cluster, write_hostfile
from tests.images.conftest import TRAINING_FLAVORS
from tests.images.podman import exec_in, podman
from tests.training_run import TRAIN_SCRIPT, TrainingRun, parse

pytestmark = pytest.mark.containers
EPOCHS = 12
CHECKPOINT_RATE = (
    "import torch; state = torch.load('/tmp/c/checkpoint.pt', weights_only=True); "
    "print('checkpoint rate', state['optimizer']['param_groups'][0]['lr'])"
)


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


def test_a_resumed_run_trains_at_the_learning_rate_its_command_line_gives(training_images: dict[str, str]) -> None:
    """--lr on a resumed run is the rate it trains at, and it says so; without --lr the checkpoint's rate goes on.
    A world of one in one container (no mpiexec): the checkpoint keeps the optimizer's rate, read back with torch."""
    runs = " && ".join(
        [
            f"python3 {TRAIN_SCRIPT} --epochs 1 --lr 0.05 --checkpoint-dir /tmp/c",
            "echo ---",
            f"python3 {TRAIN_SCRIPT} --epochs 2 --lr 0.01 --checkpoint-dir /tmp/c",
            f"python3 -c {shlex.quote(CHECKPOINT_RATE)}",
            "echo ---",
            f"python3 {TRAIN_SCRIPT} --epochs 3 --checkpoint-dir /tmp/c",
            f"python3 -c {shlex.quote(CHECKPOINT_RATE)}",
        ]
    )
    result = podman(
        "run", "--rm", "--network", "none", "--entrypoint", "bash", training_images["ompi5-torch"], "-c", runs
    )
    first, lowered, kept = result.stdout.split("---\n")
    assert "resumed" not in first
    assert "learning rate 0.01 (--lr), not the checkpoint's 0.05" in lowered, lowered
    assert lowered.rstrip().endswith("checkpoint rate 0.01"), lowered
    assert "learning rate" not in kept and kept.rstrip().endswith("checkpoint rate 0.01"), kept
    assert parse(kept).resumed_after == 2
