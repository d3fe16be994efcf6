"""What examples/training/train.py prints, read back: the tests and bench/training.py judge a run by it."""

from __future__ import annotations

import re
from dataclasses import dataclass

TRAIN_SCRIPT = "/opt/kompi/training/train.py"  # where the training image puts examples/training/train.py

_SETUP = re.compile(r"(?P<ranks>\d+) ranks on (?P<hosts>\d+) hosts \((?P<backend>\w+) on (?P<device>\w+)\)")
_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
_FINAL = re.compile(
    r"^final: test accuracy (?P<accuracy>[\d.]+), train loss (?P<loss>\S+) after (?P<epochs>\d+) epochs"
)
_RESUMED = re.compile(r"^resumed from \S+ after epoch (\d+)$")


@dataclass(frozen=True)
class Epoch:
    number: int
    train_loss: float
    test_accuracy: float
    seconds: float


@dataclass(frozen=True)
class TrainingRun:
    ranks: int
    hosts: int
    backend: str
    device: str
    epochs: list[Epoch]
    resumed_after: int | None
    final_line: str | None  # the last line, compared between runs: same seed, same loss to the digit
    final_accuracy: float | None


def parse(stdout: str) -> TrainingRun:
    """The run's figures; a run cut short has epochs but no final line."""
    setup = _SETUP.search(stdout)
    if setup is None:
        raise AssertionError(f"no set-up line in the training output:\n{stdout[-3000:]}")
    epochs, resumed, final = [], None, None
    for line in stdout.splitlines():
        if row := _ROW.match(line):
            number, loss, _, _, accuracy, seconds = row.groups()
            epochs.append(Epoch(int(number), float(loss), float(accuracy), float(seconds)))
        elif match := _RESUMED.match(line):
            resumed = int(match.group(1))
        elif _FINAL.match(line):
            final = line
    accuracy = float(_FINAL.match(final).group("accuracy")) if final else None  # type: ignore[union-attr]
    return TrainingRun(
        int(setup["ranks"]), int(setup["hosts"]), setup["backend"], setup["device"], epochs, resumed, final, accuracy
    )
