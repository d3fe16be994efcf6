"""A step of a real node's `up`, with the `down` that undoes it (kind's actions are the model)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode

Log = Callable[[str], None]


@dataclass(frozen=True)
class Step:
    """``up`` does the step's work on the node; ``down`` undoes it, also after an ``up`` that failed halfway.
    ``down``'s ``graceful``: False when the node loses power (no pod is drained, nothing waits)."""

    name: str
    up: Callable[[RealNode, Log], None]
    down: Callable[[RealNode, bool], None] = lambda node, graceful: None
