"""The real node's generated parts that need no node: containerd's config, the pause image, its addresses."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from kompi_engine.cluster.fabric import Fabric, FabricError, check_mtu
from kompi_engine.cluster.node_images import PAUSE_IMAGE, write_pause_archive
from kompi_engine.cluster.real_node import RealNode, RealNodeError
from kompi_engine.cluster.real_node import node as node_module
from kompi_engine.cluster.real_node.containerd import toml
from kompi_engine.cluster.real_node.step import Step


def test_containerd_config_is_the_toml_it_describes() -> None:
    config = {
        "version": 2,
        "root": "/state/root",
        "disabled_plugins": ["io.containerd.snapshotter.v1.aufs"],
        "plugins": {
            "io.containerd.grpc.v1.cri": {
                "restrict_oom_score_adj": True,
                "containerd": {"runtimes": {"runc": {"options": {"SystemdCgroup": False, "BinaryName": "/x/runc"}}}},
            }
        },
    }
    assert tomllib.loads(toml(config)) == config


def test_the_pause_archive_is_a_docker_archive_whose_layer_matches_its_config(tmp_path: Path) -> None:
    binary = tmp_path / "kompi-pause"
    binary.write_bytes(b"\x7fELF pretend")
    binary.chmod(0o755)
    write_pause_archive(binary, tmp_path / "pause.tar")
    with tarfile.open(tmp_path / "pause.tar") as archive:
        manifest = json.load(archive.extractfile("manifest.json"))  # type: ignore[arg-type]
        config = json.load(archive.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
        layer = archive.extractfile(manifest[0]["Layers"][0]).read()  # type: ignore[union-attr]
    assert manifest[0]["RepoTags"] == [PAUSE_IMAGE]
    assert config["rootfs"]["diff_ids"] == [f"sha256:{hashlib.sha256(layer).hexdigest()}"]
    assert config["config"]["Entrypoint"] == ["/pause"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as files:
        member = files.getmember("pause")
        assert member.mode & 0o111 and files.extractfile(member).read() == binary.read_bytes()  # type: ignore[union-attr]


def test_a_state_directory_too_deep_for_containerds_sockets_is_refused_before_anything_starts() -> None:
    deep = Path("/tmp") / ("d" * 60) / "kompi" / "local"
    node = RealNode(deep, Path("/nowhere/bin"), 16443, "10.96.0.10")
    with pytest.raises(RealNodeError, match=r"too deep for containerd's sockets .* at most 104\): use a shorter one"):
        node.check_host()
    fits = RealNode(Path("/root/.local/state/kompi/local"), Path("/nowhere/bin"), 16443, "10.96.0.10")
    assert len(f"{fits.containerd_socket}.ttrpc") <= 104  # the default state directory of root


def test_each_node_has_a_cgroup_root_of_its_own() -> None:
    ours, theirs = RealNode(Path("/s"), Path("/b"), 16443, "x"), RealNode(Path("/t"), Path("/b"), 18443, "x")
    assert ours.addresses.cgroup_root != theirs.addresses.cgroup_root
    assert "kubepods" not in ours.addresses.cgroup_root  # not the default root, which other kubelets use


def test_the_nodes_of_one_cluster_have_their_own_names_addresses_and_pod_subnets_and_route_to_each_other() -> None:
    nodes = [RealNode(Path("/s"), Path("/b"), 16443, "10.96.0.1", index, 3, mtu=9000) for index in range(3)]
    assert [node.name for node in nodes] == ["kompi-node", "kompi-node-1", "kompi-node-2"]
    assert [node.addresses.node_ip for node in nodes] == ["10.213.0.1", "10.213.0.2", "10.213.0.3"]
    assert [node.addresses.pod_subnet for node in nodes] == ["10.88.0.0/24", "10.88.1.0/24", "10.88.2.0/24"]
    assert [node.state.name for node in nodes] == ["node", "node-1", "node-2"]
    assert len({node.addresses.netns for node in nodes} | {node.addresses.cgroup_root for node in nodes}) == 3
    # each routes the others' pod subnets to their addresses, over one link of the cluster's MTU
    assert {(peer.pod_subnet, peer.node_ip) for peer in nodes[1].peers} == {
        ("10.88.0.0/24", "10.213.0.1"),
        ("10.88.2.0/24", "10.213.0.3"),
    }
    assert {node.fabric for node in nodes} == {Fabric("kompi-fabric-16443", 24, 9000)}
    # node 0 serves the registry; every node trusts the same one
    assert [node.serves_registry for node in nodes] == [True, False, False]
    assert {node.registry.address for node in nodes} == {"10.213.0.1:5000"}


@pytest.mark.parametrize("mtu", [1279, 9001])
def test_an_mtu_no_link_carries_is_refused(mtu: int) -> None:
    with pytest.raises(FabricError, match=rf"--mtu {mtu}: expected 1280 to 9000"):
        check_mtu(mtu)


def _recording_steps(
    journal: list[str], failing: str | None = None, failing_undo: tuple[str, ...] = ()
) -> tuple[Step[RealNode], ...]:
    """Steps named as the real node's, whose up and down note themselves in ``journal``; ``failing``'s up
    fails after noting itself (halfway), as does the down of each of ``failing_undo``."""

    def up(name: str) -> Callable[[RealNode, Callable[[str], None]], None]:
        def run(node: RealNode, log: Callable[[str], None]) -> None:
            journal.append(f"up {name}")
            if name == failing:
                raise RealNodeError("socat: address in use")

        return run

    def down(name: str) -> Callable[[RealNode, bool], None]:
        def undo(node: RealNode, graceful: bool) -> None:
            journal.append(f"down {name}{'' if graceful else ' (power off)'}")
            if name in failing_undo:
                raise RealNodeError(f"{name} would not stop")

        return undo

    return tuple(Step(step.name, up(step.name), down(step.name)) for step in node_module.STEPS)


@pytest.fixture
def bare_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RealNode:
    """A node as its runner sees it: no host checks, no images, no link, no API server."""
    node = RealNode(tmp_path / "state", tmp_path / "bin", 56443, "10.96.0.10")  # no test block's ports
    monkeypatch.setattr(node, "check_host", lambda: None)
    monkeypatch.setattr(node_module, "from_podman", lambda names: {})
    monkeypatch.setattr(Fabric, "exists", lambda self: True)
    monkeypatch.setattr(node, "kubectl", lambda *args, **kwargs: "")
    return node


def test_a_failed_step_is_named_and_down_undoes_what_began_in_reverse(
    bare_node: RealNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(node_module, "STEPS", _recording_steps(journal, failing="containerd"))
    lines: list[str] = []

    with pytest.raises(RealNodeError, match=r"^real node kompi-node, step containerd: socat: address in use$"):
        bare_node.up(lines.append)

    # the failed step is undone too (it may have done part of its work); nothing after it ran
    assert journal == ["up network", "up proxies", "up containerd", "down containerd", "down proxies", "down network"]
    assert lines == ["real node kompi-node: containerd failed; undoing containerd, proxies, network"]
    assert bare_node.steps_begun() == []  # down removed the record


def test_down_undoes_every_step_of_a_node_that_came_up_and_power_off_drains_nothing(
    bare_node: RealNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(node_module, "STEPS", _recording_steps(journal))
    bare_node.up(lambda line: None)
    names = [step.name for step in node_module.STEPS]
    assert bare_node.steps_begun() == names
    journal.clear()

    bare_node.power_off()
    assert journal == [f"down {name} (power off)" for name in reversed(names)]
    assert bare_node.steps_begun() == []  # a second power_off or down undoes nothing twice
    journal.clear()
    bare_node.up(lambda line: None)
    journal.clear()
    bare_node.down()
    assert journal == [f"down {name}" for name in reversed(names)]


def test_a_node_without_a_record_but_with_its_namespace_is_undone_whole(
    bare_node: RealNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(node_module, "STEPS", _recording_steps(journal))
    monkeypatch.setattr(RealNode, "in_use", lambda self: True)  # (a node an older kompi started)
    bare_node.down()
    assert journal == [f"down {step.name}" for step in reversed(node_module.STEPS)]


def test_an_undo_that_fails_stops_no_other_and_down_names_every_failure(
    bare_node: RealNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    monkeypatch.setattr(node_module, "STEPS", _recording_steps(journal, failing_undo=("kubelet", "containerd")))
    bare_node.up(lambda line: None)
    names = [step.name for step in node_module.STEPS]
    journal.clear()

    with pytest.raises(RealNodeError) as raised:
        bare_node.down()

    # every step's undo ran, in reverse, past the two that failed
    assert journal == [f"down {name}" for name in reversed(names)]
    assert str(raised.value) == (
        "real node kompi-node: undoing 2 step(s) failed (the others were undone): "
        "kubelet: kubelet would not stop; containerd: containerd would not stop"
    )
    assert bare_node.steps_begun() == names  # kept: a second down undoes them again


def test_a_failed_up_whose_undo_fails_raises_the_steps_error_and_logs_the_undos(
    bare_node: RealNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: list[str] = []
    steps = _recording_steps(journal, failing="containerd", failing_undo=("proxies",))
    monkeypatch.setattr(node_module, "STEPS", steps)
    lines: list[str] = []

    with pytest.raises(RealNodeError, match=r"^real node kompi-node, step containerd: socat: address in use$"):
        bare_node.up(lines.append)

    assert journal == ["up network", "up proxies", "up containerd", "down containerd", "down proxies", "down network"]
    assert lines[1:] == [
        "real node kompi-node: undoing 1 step(s) failed (the others were undone): proxies: proxies would not stop"
    ]


def test_a_node_needs_the_clusters_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The link between the nodes is the cluster's step; a node started without it says so and starts nothing."""
    node = RealNode(tmp_path / "state", tmp_path / "bin", 56443, "10.96.0.10")
    monkeypatch.setattr(node, "check_host", lambda: None)
    monkeypatch.setattr(node_module, "from_podman", lambda names: {})
    monkeypatch.setattr(Fabric, "exists", lambda self: False)
    with pytest.raises(RealNodeError, match=r"the link between the nodes \(network namespace kompi-fabric-56443\)"):
        node.up(lambda line: None)
    assert not node.steps_file.exists()
