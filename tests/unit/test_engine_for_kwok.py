"""`engine build --kwok`: what a cluster of kwok nodes and the Pulumi operations on it need, without the real
node's binaries but CoreDNS (bin/test starts the kwok e2e run on it while those still build)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kompi_engine import cli
from kompi_engine.build import engine, node_binaries, pulumi_binaries
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.operation import command


def binaries_of(names: tuple[str, ...]) -> set[str]:
    return {binary for component in engine.COMPONENTS if component.name in names for binary in component.binaries}


def test_the_kwok_build_holds_every_control_plane_binary_pulumi_and_coredns_but_none_of_the_real_nodes_own(
    tmp_path: Path,
) -> None:
    built = binaries_of(engine.KWOK_CLUSTER)
    assert set(LocalCluster(tmp_path, kueue=True).control_plane_binaries) <= built
    assert {c.name for c in pulumi_binaries.COMPONENTS} <= set(engine.KWOK_CLUSTER)
    # the kwok run's discovery test at scale serves its workers from a stock CoreDNS
    assert node_binaries.COREDNS in built
    real_nodes = {binary for component in node_binaries.COMPONENTS for binary in component.binaries}
    assert built & real_nodes == {node_binaries.COREDNS}
    assert built | real_nodes == binaries_of(tuple(c.name for c in engine.COMPONENTS))


def test_engine_build_kwok_builds_only_the_kwok_clusters_components(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []
    monkeypatch.setattr(engine, "build_engine", asked.append)
    assert cli.main(["engine", "build", "--kwok"]) == 0
    assert cli.main(["engine", "build"]) == 0
    assert cli.main(["engine", "build", "etcd"]) == 0
    assert asked == [engine.KWOK_CLUSTER, None, ["etcd"]]


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("running", "node", "expected"),
    [
        (False, "auto", None),  # a cluster that starts may get a real node: everything
        (False, "real", None),
        (False, "kwok", engine.KWOK_CLUSTER),
        (True, "auto", engine.KWOK_CLUSTER),  # a running cluster has its nodes: Pulumi and kubectl only
    ],
)
def test_up_local_builds_what_the_cluster_it_uses_needs(
    monkeypatch: pytest.MonkeyPatch, running: bool, node: str, expected: tuple[str, ...] | None
) -> None:
    checked: list[object] = []

    def built(only: object = None) -> bool:
        checked.append(only)
        return False

    def build_engine(only: object = None) -> None:
        checked.append(only)
        raise _Stop

    cluster = SimpleNamespace(processes=SimpleNamespace(running=lambda: running))
    monkeypatch.setattr(command, "LocalCluster", lambda **_: cluster)
    monkeypatch.setattr(command, "is_built", built)
    monkeypatch.setattr(command, "build_engine", build_engine)
    with pytest.raises(_Stop):
        command._ensure_local_cluster(object(), node)  # type: ignore[arg-type]  # unread before the build
    assert checked == [expected, expected]
