"""Helpers of the import-values tests: CLI results, rendering and finding objects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.k8s_schema import validate
from tests.stacks import REPO

FIXTURES = REPO / "tests" / "fixtures" / "kube-openmpi"


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line]

    def warnings_for(self, path: str) -> list[str]:
        return [line for line in self.err_lines if line.startswith(f"warning: {path}: ")]


Kompi = Callable[..., Run]


def write_values(directory: Path, values: dict[str, Any], name: str = "values.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(values))
    return path


def render(kompi: Kompi, project: Path, stack: str) -> list[dict[str, Any]]:
    """`render --stack` as a user runs it; every object must be valid for Kubernetes."""
    rendered = kompi("render", "--stack", stack, "--dir", project)
    assert rendered.code == 0, rendered.err
    objects = [manifest for manifest in yaml.safe_load_all(rendered.out) if manifest]
    for manifest in objects:
        validate(manifest)
    return objects


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [m for m in objects if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name} not rendered once: {[m['metadata']['name'] for m in objects]}"
    return matches[0]


def pod_spec(statefulset: dict[str, Any]) -> dict[str, Any]:
    return statefulset["spec"]["template"]["spec"]


def mpi_container(statefulset: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod_spec(statefulset)["containers"] if c["name"] == "mpi")
