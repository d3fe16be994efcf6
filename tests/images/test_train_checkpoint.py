"""examples/training/train.py's checkpoints, on the host (torch, numpy, scikit-learn and kompi_torch stood
in for: only the file handling and the learning rate's choice run). A rename alone survives a killed process, not a
node that loses power: the new file's data and the directory entry that names it must reach the disk, in that order.
The resumed run's --lr: tests/images/test_training.py runs it in the training image."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from tests.images.podman import REPO_ROOT
from tests.images.script_module import load_script

TRAIN = REPO_ROOT / "examples" / "training" / "train.py"
STOOD_IN = (
    "numpy",
    "torch",
    "torch.distributed",
    "torch.nn",
    "torch.nn.parallel",
    "torch.utils",
    "torch.utils.data",
    "torch.utils.data.distributed",
    "sklearn",
    "sklearn.datasets",
    "sklearn.model_selection",
    "kompi_torch",
)


@pytest.fixture
def train(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in STOOD_IN:
        monkeypatch.setitem(sys.modules, name, mock.MagicMock(name=name))
    return load_script(monkeypatch, "train_under_test", TRAIN)


def test_a_checkpoint_reaches_the_disk_before_and_after_its_rename(
    train: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "checkpoints"
    directory.mkdir()
    target = directory / "checkpoint.pt"
    target.write_bytes(b"epoch 1")
    synced: list[tuple[str, bytes | None]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        """Which file or directory ``fd`` is, and what the target holds at that moment."""
        inode = os.fstat(fd).st_ino
        names = {path.stat().st_ino: path.name for path in directory.iterdir()} | {directory.stat().st_ino: "."}
        synced.append((names.get(inode, "?"), target.read_bytes()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    train.save_atomically(target, lambda path: path.write_bytes(b"epoch 2"))

    assert target.read_bytes() == b"epoch 2"
    assert sorted(path.name for path in directory.iterdir()) == ["checkpoint.pt"]  # no temporary file left
    # the new file's data while it is still the temporary file, then the directory once it names the new file
    assert synced == [("checkpoint.pt.tmp", b"epoch 1"), (".", b"epoch 2")], synced


def saved_at(rate: float) -> dict[str, Any]:
    """A checkpoint as train.py writes it, as far as the rate goes."""
    return {"epoch": 6, "optimizer": {"param_groups": [{"lr": rate, "momentum": 0.9}]}}


def test_the_command_lines_learning_rate_wins_on_a_resumed_run_and_says_so(train: Any) -> None:
    assert train.learning_rate(None, None) == (0.05, None)  # a new run: the default
    assert train.learning_rate(0.01, None) == (0.01, None)
    assert train.learning_rate(None, saved_at(0.01)) == (0.01, None)  # resumed without --lr: as it was going
    assert train.learning_rate(0.01, saved_at(0.01)) == (0.01, None)
    assert train.learning_rate(0.002, saved_at(0.01)) == (
        0.002,
        "learning rate 0.002 (--lr), not the checkpoint's 0.01",
    )
