"""`kompi engine build`: every binary the local engine needs, built once per set of versions."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from kompi_engine.build import cluster_binaries, gang_scheduler, kueue, node_binaries, phases, pulumi_binaries
from kompi_engine.build.gobuild import BuildError, Component, GoBuild, build_components

COMPONENTS: tuple[Component, ...] = (
    cluster_binaries.COMPONENTS
    + gang_scheduler.COMPONENTS
    + kueue.COMPONENTS
    + pulumi_binaries.COMPONENTS
    + node_binaries.COMPONENTS
)
# What a cluster of kwok nodes and the Pulumi operations on it need: all but the real node's own binaries
# (kubelet, pause, kube-router, registry), with CoreDNS, which the kwok run's discovery test at scale
# (tests/e2e/test_discovery_scale.py) serves thousands of workers from: a cold run once started that test
# before the real node's build had made it. bin/test starts the kwok e2e run once these are built.
KWOK_CLUSTER: tuple[str, ...] = tuple(
    c.name for c in COMPONENTS if c not in node_binaries.COMPONENTS or c.name == node_binaries.COREDNS
)


def _progress(line: str) -> None:
    print(f"[kompi engine] {line}", file=sys.stderr, flush=True)


def _selected(only: Sequence[str] | None) -> list[Component]:
    """Every component, or those named in ``only`` (a name that is none is an error)."""
    unknown = set(only or []) - {c.name for c in COMPONENTS}
    if unknown:
        raise BuildError(f"unknown component(s) {', '.join(sorted(unknown))}; known: {[c.name for c in COMPONENTS]}")
    return [c for c in COMPONENTS if not only or c.name in only]


def build_engine(only: Sequence[str] | None = None) -> GoBuild:
    """Build what is missing; returns the tree whose ``bin`` holds the binaries."""
    build = GoBuild.default()
    for name, times in build_components(build, _selected(only), _progress).items():
        note = f"compiling {times.compiling:.0f} s, waiting for the compiler {times.waiting:.0f} s"
        phases.record(f"engine: {name}", times.started, note, times.started + times.total)
    _progress(f"binaries in {build.bin}")
    return build


def is_built(only: Sequence[str] | None = None) -> bool:
    """Whether every component (or every one named in ``only``) is built at its versions."""
    build = GoBuild.default()
    return all(build.up_to_date(c.name, c.stamp, c.binaries) for c in _selected(only))
