"""The local cluster's `up` as recorded steps and its `down` as their undo (no binaries, no processes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from kompi_engine.cluster import gang, kueue
from kompi_engine.cluster import local as local_module
from kompi_engine.cluster.fabric import Fabric
from kompi_engine.cluster.local import LocalCluster, LocalClusterError
from kompi_engine.cluster.processes import ProcessTable
from kompi_engine.cluster.real_node import RealNode, RealNodeError
from kompi_engine.cluster.steps import Step

NAMES = [step.name for step in local_module.STEPS]


def _recording_steps(
    journal: list[str], failing: str | None = None, failing_undo: tuple[str, ...] = ()
) -> tuple[Step[LocalCluster], ...]:
    """Steps named as the cluster's, noting their up and down in ``journal``; ``failing``'s up fails after
    noting itself (halfway), as does the down of each of ``failing_undo``."""

    def up(name: str) -> Callable[[LocalCluster, Callable[[str], None]], None]:
        def run(cluster: LocalCluster, log: Callable[[str], None]) -> None:
            journal.append(f"up {name}")
            if name == failing:
                raise LocalClusterError("port 127.0.0.1:12379 (etcd) is in use by another program")

        return run

    def down(name: str) -> Callable[[LocalCluster, bool], None]:
        def undo(cluster: LocalCluster, graceful: bool) -> None:
            journal.append(f"down {name}")
            if name in failing_undo:
                raise LocalClusterError(f"{name} would not stop")

        return undo

    return tuple(Step(name, up(name), down(name)) for name in NAMES)


@pytest.fixture
def bare_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalCluster:
    """A cluster as its runner sees it: no binaries, no ports, no host checks."""
    cluster = LocalCluster(state=tmp_path / "state", bin=tmp_path / "bin")
    monkeypatch.setattr(cluster, "_check_binaries", lambda: None)
    monkeypatch.setattr(cluster, "_check_ports_free", lambda: None)
    monkeypatch.setattr(RealNode, "check_host", lambda self: None)
    return cluster


def test_up_runs_the_clusters_steps_in_order_and_records_them(
    bare_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(local_module, "STEPS", _recording_steps(journal))
    bare_cluster.up()
    kwok = [name for name in NAMES if name not in ("kueue", "kueue quota", "fabric")]
    assert journal == [f"up {name}" for name in kwok]  # kwok's nodes need no link; no Kueue unless asked
    assert bare_cluster.steps_begun() == kwok

    journal.clear()
    bare_cluster.down()
    assert journal == [f"down {name}" for name in reversed(kwok)]
    assert not (bare_cluster.state / "steps.json").exists()

    journal.clear()
    bare_cluster.real_node, bare_cluster.kueue = True, True
    bare_cluster.up()
    assert journal == [f"up {name}" for name in NAMES]  # the link before the nodes, Kueue's quota after them


def test_a_failed_step_is_undone_with_those_before_it(
    bare_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(local_module, "STEPS", _recording_steps(journal, failing="controllers"))
    lines: list[str] = []

    with pytest.raises(LocalClusterError, match=r"port 127.0.0.1:12379 \(etcd\) is in use"):
        bare_cluster.up(lines.append)

    begun = ["certificates", "etcd", "kube-apiserver", "controllers"]
    assert journal == [f"up {name}" for name in begun] + [f"down {name}" for name in reversed(begun)]
    assert lines == ["start failed at controllers: undoing controllers, kube-apiserver, etcd, certificates"]


def test_an_undo_that_fails_stops_no_other_and_down_names_every_failure(
    bare_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(local_module, "STEPS", _recording_steps(journal, failing_undo=("nodes",)))
    bare_cluster.up()
    begun = bare_cluster.steps_begun()
    journal.clear()

    with pytest.raises(LocalClusterError) as raised:
        bare_cluster.down()

    # the API server's clients, the API server and its store are stopped all the same
    assert journal == [f"down {name}" for name in reversed(begun)]
    assert str(raised.value) == (
        f"local cluster {bare_cluster.state}: undoing 1 step(s) failed (the others were undone): "
        "nodes: nodes would not stop"
    )
    assert bare_cluster.steps_begun() == begun  # kept for a second down


def test_a_failed_up_whose_undo_fails_raises_the_steps_error_and_logs_the_undos(
    bare_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    steps = _recording_steps(journal, failing="gang scheduler", failing_undo=("kube-apiserver", "etcd"))
    monkeypatch.setattr(local_module, "STEPS", steps)
    lines: list[str] = []

    with pytest.raises(LocalClusterError, match=r"^port 127.0.0.1:12379 \(etcd\) is in use by another program$"):
        bare_cluster.up(lines.append)

    assert journal[-6:] == [
        "down gang scheduler",
        "down crds",
        "down controllers",
        "down kube-apiserver",
        "down etcd",
        "down certificates",
    ]
    assert lines[1] == (
        f"local cluster {bare_cluster.state}: undoing 2 step(s) failed (the others were undone): "
        "kube-apiserver: kube-apiserver would not stop; etcd: etcd would not stop"
    )


class _Node:
    """A started node whose down notes itself, or fails."""

    def __init__(self, name: str, index: int, journal: list[str], fails: bool = False) -> None:
        self.name, self.journal, self.fails = name, journal, fails
        self.addresses = SimpleNamespace(index=index)
        self.processes = SimpleNamespace(running=lambda: [])

    def down(self) -> list[str]:
        self.journal.append(f"down {self.name}")
        if self.fails:
            raise RealNodeError(f"real node {self.name}: undoing 1 step(s) failed (the others were undone): kubelet")
        return []


def test_down_without_a_record_stops_every_part_in_order_and_each_node_whatever_another_did(
    bare_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster that an older kompi started has no record: down undoes the real steps, every one of them,
    stopping the nodes (each one, past a node that failed), the link, the API server's clients, then the
    API server, then its store."""
    journal: list[str] = []
    nodes = [_Node("kompi-node-1", 1, journal, fails=True), _Node("kompi-node", 0, journal)]
    monkeypatch.setattr(LocalCluster, "_started_nodes", lambda self: nodes)
    monkeypatch.setattr(Fabric, "down", lambda self: journal.append("down fabric"))

    def stop(self: ProcessTable, names: Sequence[str], grace: float = 10.0) -> list[str]:
        journal.append(f"stop {', '.join(names)}")
        return []

    monkeypatch.setattr(ProcessTable, "stop", stop)

    with pytest.raises(LocalClusterError, match=r"nodes: real node kompi-node-1: undoing 1 step\(s\) failed"):
        bare_cluster.down()

    assert journal == [
        "down kompi-node-1",
        "down kompi-node",
        "down fabric",
        f"stop {kueue.PROCESS_NAME}",
        f"stop {', '.join(gang.PROCESS_NAMES)}",
        "stop kwok, kube-scheduler, kube-controller-manager",
        "stop kube-apiserver",
        "stop etcd",
    ]
