"""The result of translating values: kompi config, where each key came from, and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Notice:
    """A key whose meaning changed, or that kompi does not import (one line on stderr)."""

    path: str
    message: str

    def line(self) -> str:
        return f"warning: {self.path}: {self.message}"


@dataclass
class Translation:
    # kompi config without the "kompi:" prefix, nested as in the stack file.
    config: dict[str, Any] = field(default_factory=dict)
    # kompi key path (e.g. "workerPod.resources") -> the kube-openmpi key or option it came from.
    origins: dict[str, str] = field(default_factory=dict)
    warnings: list[Notice] = field(default_factory=list)
    # kube-openmpi keys read and deliberately left out without a warning (they change nothing).
    accepted: set[str] = field(default_factory=set)

    def set(self, key: str, value: Any, source: str) -> None:
        """Set the kompi key ``key`` (dotted for nested objects) from ``source``."""
        *parents, last = key.split(".")
        target = self.config
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
        self.origins[key] = source

    def origin(self, key: str, source: str) -> None:
        """Record that a part of a kompi key (e.g. "appCode[0].ref") came from ``source``."""
        self.origins[key] = source

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(Notice(path, message))

    def accept(self, path: str) -> None:
        self.accepted.add(path)

    def source_of(self, kompi_key: str) -> str | None:
        """The source of ``kompi_key`` or of the closest enclosing key that has one."""
        best: str | None = None
        for key in self.origins:
            inside = kompi_key == key or kompi_key.startswith((f"{key}.", f"{key}["))
            if inside and (best is None or len(key) > len(best)):
                best = key
        return self.origins[best] if best is not None else None

    def sources(self, top_key: str) -> list[str]:
        """Every source of the top-level kompi key ``top_key``, in the order they were recorded."""
        found: list[str] = []
        for key, source in self.origins.items():
            if (key == top_key or key.startswith((f"{top_key}.", f"{top_key}["))) and source not in found:
                found.append(source)
        return found
