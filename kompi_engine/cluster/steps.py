"""Steps with their undo, recorded as they begin: how the local cluster (local.py) and each real node
(real_node/node.py) start, so that `down` undoes exactly what began, in reverse (kind's actions are the
model). An undo that fails does not stop the others: every later one still runs, and each failure is
reported."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
Log = Callable[[str], None]


def _nothing(target: object, graceful: bool) -> None:
    """The undo of a step that leaves nothing behind (a file written, an object applied)."""


@dataclass(frozen=True)
class Step(Generic[T]):
    """``up`` does the step's work on its target (the cluster, a node); ``down`` undoes it, also after an ``up``
    that failed halfway. ``down``'s ``graceful``: False when a node loses power (no pod is drained, nothing
    waits)."""

    name: str
    up: Callable[[T, Log], None]
    down: Callable[[T, bool], None] = _nothing


@dataclass(frozen=True)
class Record:
    """The names of the steps an `up` began, in order, in a JSON file of the target's state."""

    file: Path

    def read(self) -> list[str] | None:
        """The recorded names; None when there is no record."""
        if not self.file.exists():
            return None
        return [str(name) for name in json.loads(self.file.read_text())]

    def write(self, names: Sequence[str]) -> None:
        self.file.write_text(json.dumps(list(names)))

    def forget(self) -> None:
        self.file.unlink(missing_ok=True)


def undo(target: T, steps: Sequence[Step[T]], begun: Sequence[str], graceful: bool = True) -> list[str]:
    """Undo the ``begun`` steps in reverse, each one even when an earlier undo failed; returns one line per
    failure ("name: error"), empty when every undo did its work."""
    by_name = {step.name: step for step in steps}
    failures: list[str] = []
    for name in reversed(begun):
        step = by_name.get(name)
        if step is None:  # a record from another kompi's steps
            failures.append(f"{name}: no such step (expected one of {', '.join(by_name)})")
            continue
        try:
            step.down(target, graceful)
        except Exception as error:  # reported with the others, once every undo ran
            failures.append(f"{name}: {error}")
    return failures


def undo_failed(what: str, failures: Sequence[str]) -> str:
    """One line naming every step whose undo failed."""
    return f"{what}: undoing {len(failures)} step(s) failed (the others were undone): {'; '.join(failures)}"
