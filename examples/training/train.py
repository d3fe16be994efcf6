"""Data-parallel training across a kompi cluster: a small CNN learns scikit-learn's handwritten digits.

    mpiexec python3 /opt/kompi/training/train.py --checkpoint-dir /data/digits

Every rank trains on its shard of the data (DistributedDataParallel); rank 0 prints one line per epoch
and writes a checkpoint after each one, so a run that was cut short resumes where it stopped. The dataset
ships inside scikit-learn (1,797 8x8 images): nothing is downloaded; with --data, train.py reads the copy
that prepare.py wrote on a volume instead (kompi:dataPreparation). The same seed and the same number of
ranks give the same losses, run after run and across a resume: the data order depends only on the seed
and the epoch, and rank 0 hands its state to every rank.

kompi's training image puts this file, prepare.py and gpu-check.sh in /opt/kompi/training, and kompi_torch
(the process group from `mpiexec`'s environment) on every python3's path.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from kompi_torch import Place, init_process_group
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

HEADER = f"{'epoch':>5} {'train/loss':>11} {'train/acc':>10} {'test/loss':>10} {'test/acc':>9} {'time/s':>7}"
ROW = "{:>5} {:>11.6f} {:>10.4f} {:>10.6f} {:>9.4f} {:>7.2f}"
CHECKPOINT = "checkpoint.pt"
LEARNING_RATE = 0.05
RESULT = "result.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="train until this epoch (default 20)")
    parser.add_argument("--batch-size", type=int, default=32, help="samples per rank and step (default 32)")
    parser.add_argument(
        "--lr", type=float, help=f"SGD learning rate (default {LEARNING_RATE}; resumed: the checkpoint's)"
    )
    parser.add_argument("--seed", type=int, default=0, help="weights, split and data order (default 0)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per rank (default 1)")
    parser.add_argument("--checkpoint-dir", type=Path, help="checkpoint after every epoch, resume from it")
    parser.add_argument("--data", type=Path, help="digits.npz from prepare.py (default: scikit-learn's own copy)")
    parser.add_argument("--min-accuracy", type=float, default=0.0, help="exit 1 if the final test accuracy is lower")
    return parser.parse_args(argv)


def model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def datasets(seed: int, data: Path | None) -> tuple[TensorDataset, TensorDataset]:
    """The digits as 1x8x8 images scaled to [0, 1], three quarters to train, the same split on every rank."""
    if data is not None:
        with np.load(data) as prepared:
            images, labels = torch.from_numpy(prepared["images"]), torch.from_numpy(prepared["labels"])
    else:
        digits = load_digits()
        images, labels = torch.tensor(digits.images / 16.0, dtype=torch.float32), torch.tensor(digits.target)
    images, labels = images.unsqueeze(1), labels.long()
    train_x, test_x, train_y, test_y = train_test_split(
        images, labels, test_size=0.25, random_state=seed, stratify=labels
    )
    return TensorDataset(train_x, train_y), TensorDataset(test_x, test_y)


@dataclass
class Totals:
    """Loss and correct answers summed over this rank's samples; summed over all ranks by all_reduce."""

    loss: float = 0.0
    correct: int = 0
    samples: int = 0

    def add(self, logits: torch.Tensor, labels: torch.Tensor, loss: torch.Tensor) -> None:
        self.loss += float(loss) * len(labels)
        self.correct += int((logits.argmax(1) == labels).sum())
        self.samples += len(labels)

    def over_all_ranks(self, device: torch.device) -> tuple[float, float]:
        """(mean loss, accuracy) over every rank's samples."""
        sums = torch.tensor([self.loss, self.correct, self.samples], dtype=torch.float64, device=device)
        dist.all_reduce(sums)
        loss, correct, samples = sums.tolist()
        return loss / samples, correct / samples


def train_epoch(net: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer, place: Place) -> Totals:
    net.train()
    totals = Totals()
    for images, labels in loader:
        images, labels = images.to(place.device), labels.to(place.device)
        optimizer.zero_grad()
        logits = net(images)
        loss = nn.functional.cross_entropy(logits, labels)
        loss.backward()  # DDP averages the gradients over the ranks here
        optimizer.step()
        totals.add(logits.detach(), labels, loss.detach())
    return totals


@torch.no_grad()
def evaluate(net: nn.Module, loader: DataLoader, place: Place) -> Totals:
    net.eval()
    totals = Totals()
    for images, labels in loader:
        images, labels = images.to(place.device), labels.to(place.device)
        logits = net(images)
        totals.add(logits, labels, nn.functional.cross_entropy(logits, labels))
    return totals


def load_checkpoint(directory: Path | None, place: Place) -> dict | None:
    """Rank 0 reads the checkpoint (if any) and every rank gets it: a worker's own volume need not hold one."""
    state = [None]
    if place.rank == 0 and directory is not None and (directory / CHECKPOINT).exists():
        state[0] = torch.load(directory / CHECKPOINT, map_location="cpu", weights_only=True)
    dist.broadcast_object_list(state, src=0)
    return state[0]


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def save_atomically(path: Path, write: object) -> None:
    """Write through a temporary file and rename it, so a run killed mid-write leaves the last good file; the new
    file's data reaches the disk before the rename and the directory's entry after it, so a node that loses power
    keeps the last good file too (a rename alone may reach the disk before the data it names)."""
    temporary = path.with_name(path.name + ".tmp")
    write(temporary)  # type: ignore[operator]
    _fsync(temporary)
    os.replace(temporary, path)
    _fsync(path.parent)


def learning_rate(given: float | None, checkpoint: dict | None) -> tuple[float, str | None]:
    """The rate to train at and, when --lr changes a resumed run's rate, a line that says so. --lr wins: it is
    the run's latest word (lowering the rate to go on from a checkpoint is common); without it a resumed run goes
    on at its checkpoint's rate, as the interrupted run would have."""
    if checkpoint is None:
        return (LEARNING_RATE if given is None else given), None
    saved = checkpoint["optimizer"]["param_groups"][0]["lr"]
    if given is None or given == saved:
        return saved, None
    return given, f"learning rate {given} (--lr), not the checkpoint's {saved}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    place = init_process_group()
    # rank 0 speaks, a line at a time: `kubectl logs` and a watcher see each epoch as it ends
    say = functools.partial(print, flush=True) if place.rank == 0 else (lambda *_, **__: None)
    torch.manual_seed(args.seed)

    train_set, test_set = datasets(args.seed, args.data)
    sampler = DistributedSampler(train_set, place.world_size, place.rank, shuffle=True, seed=args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)
    net = model().to(place.device)
    optimizer = torch.optim.SGD(net.parameters(), lr=LEARNING_RATE, momentum=0.9)  # the rate: learning_rate

    start_epoch, train_loss = 0, float("nan")
    if args.checkpoint_dir is not None and place.rank == 0:
        args.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = load_checkpoint(args.checkpoint_dir, place)
    if checkpoint is not None:
        net.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])  # the checkpoint's rate, which --lr may change
        start_epoch, train_loss = checkpoint["epoch"], checkpoint["train_loss"]
        say(f"resumed from {args.checkpoint_dir / CHECKPOINT} after epoch {start_epoch}")
    rate, changed = learning_rate(args.lr, checkpoint)
    for group in optimizer.param_groups:
        group["lr"] = rate
    if changed:
        say(changed)
    net = DistributedDataParallel(net)  # broadcasts rank 0's weights to every rank
    hosts: list[str | None] = [None] * place.world_size
    dist.all_gather_object(hosts, socket.gethostname())

    say(
        f"digits: {len(train_set)} training and {len(test_set)} test images; {place.world_size} ranks on "
        f"{len(set(hosts))} hosts ({place.backend} on {place.device.type}), {args.batch_size} images per rank and step"
    )
    say(HEADER)
    for epoch in range(start_epoch, args.epochs):
        began = time.perf_counter()
        sampler.set_epoch(epoch)
        train_loss, train_accuracy = train_epoch(net, train_loader, optimizer, place).over_all_ranks(place.device)
        test_loss, test_accuracy = evaluate(net, test_loader, place).over_all_ranks(place.device)
        seconds = time.perf_counter() - began
        say(ROW.format(epoch + 1, train_loss, train_accuracy, test_loss, test_accuracy, seconds))
        if args.checkpoint_dir is not None and place.rank == 0:
            state = {
                "epoch": epoch + 1,
                "train_loss": train_loss,
                "model": net.module.state_dict(),
                "optimizer": optimizer.state_dict(),
            }
            save_atomically(args.checkpoint_dir / CHECKPOINT, lambda path, state=state: torch.save(state, path))
    if start_epoch >= args.epochs:  # nothing left to train: the checkpoint's model, evaluated
        test_loss, test_accuracy = evaluate(net, test_loader, place).over_all_ranks(place.device)

    say(f"final: test accuracy {test_accuracy:.4f}, train loss {train_loss:.6f} after {args.epochs} epochs")
    if args.checkpoint_dir is not None and place.rank == 0:
        result = {
            "epochs": args.epochs,
            "ranks": place.world_size,
            "test_accuracy": test_accuracy,
            "test_loss": test_loss,
            "train_loss": train_loss,
        }
        save_atomically(args.checkpoint_dir / RESULT, lambda path: path.write_text(json.dumps(result) + "\n"))
    dist.destroy_process_group()
    if test_accuracy < args.min_accuracy:
        say(f"test accuracy {test_accuracy:.4f} is below --min-accuracy {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
