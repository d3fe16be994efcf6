"""Step containerd: the node's container runtime (runc, the bridge CNI, overlayfs snapshots), in the node's
network namespace and a UTS namespace of its own."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from kompi_engine.cluster import node_images
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode

CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
# overlayfs: a container starts from the image's layers without a copy. The native snapshotter copied the
# whole image for every container: 6 GB per pod of the training image (31 GB on disk for three pods, against
# 12 GB). An early node saw kompi containers unable to create files in /tmp with overlayfs; on 2026-12-05
# the MPI and job tests of tests/e2e/node passed with it, and a pod's user created files there.
SNAPSHOTTER = "overlayfs"


def cni_config(node: RealNode) -> dict[str, object]:
    return {
        "cniVersion": "0.4.0",
        "name": "kompi-node",
        "type": "bridge",
        "bridge": "cni0",
        "isGateway": True,
        "ipMasq": False,  # pod addresses are routed between the nodes, and there is no uplink beyond them
        "hairpinMode": True,
        "mtu": node.fabric.mtu,  # the link's: pod packets cross it unencapsulated
        "ipam": {
            "type": "host-local",
            "dataDir": str(node.state / "cni" / "ipam"),
            "ranges": [[{"subnet": node.addresses.pod_subnet, "gateway": node.addresses.pod_gateway}]],
            "routes": [{"dst": "0.0.0.0/0"}],
        },
    }


def containerd_config(node: RealNode) -> dict[str, object]:
    root = node.state / "containerd"
    cri = {
        "sandbox_image": node_images.PAUSE_IMAGE,
        # root here lacks CAP_SYS_RESOURCE: runc cannot set the negative oom_score_adj the CRI asks
        # for the sandbox ("can't get final child's PID from pipe: EOF"); clamp it to containerd's own
        "restrict_oom_score_adj": True,
        "containerd": {
            "snapshotter": SNAPSHOTTER,
            # a pulled layer's blob goes once it is unpacked into the snapshot: a node keeps one copy of an
            # image (6 GB for the training image) and not two; nothing here reads the blobs again
            "discard_unpacked_layers": True,
            "default_runtime_name": "runc",
            "runtimes": {
                "runc": {
                    "runtime_type": "io.containerd.runc.v2",
                    "options": {"SystemdCgroup": False, "BinaryName": shutil.which("runc")},
                }
            },
        },
        "cni": {"bin_dir": str(CNI_PLUGINS), "conf_dir": str(node.state / "cni" / "net.d")},
        "registry": {"config_path": str(root / "certs.d")},
    }
    return {
        "version": 2,
        "root": str(root / "root"),
        "state": str(root / "state"),
        "grpc": {"address": str(node.containerd_socket)},
        "disabled_plugins": [f"io.containerd.snapshotter.v1.{name}" for name in ("aufs", "btrfs", "zfs", "devmapper")],
        "plugins": {"io.containerd.grpc.v1.cri": cri},
    }


def _up(node: RealNode, log: Log) -> None:
    (node.state / "cni" / "net.d" / "10-kompi-node.conf").write_text(json.dumps(cni_config(node), indent=1))
    config = node.state / "containerd" / "config.toml"
    config.write_text(toml(containerd_config(node)))
    # A UTS namespace of its own too, named as the node: host-network pods share their runtime's hostname,
    # and Open MPI 5 merged two nodes that reported the same one (the host's) into one and hung.
    own_hostname = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', node.name]
    node.containerd_socket.unlink(missing_ok=True)  # a node that lost power left its socket behind
    node.processes.start("containerd", ["containerd", "--config", str(config)], None, [*node.in_netns, *own_hostname])
    node.wait("containerd", 30, lambda: _answers(node))


def _answers(node: RealNode) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        return probe.connect_ex(str(node.containerd_socket)) == 0


def _down(node: RealNode, graceful: bool) -> None:
    node.processes.stop(("containerd",), node.grace(graceful))
    _kill_shims(node)
    _unmount(node)


def _kill_shims(node: RealNode) -> None:
    """containerd's shims outlive it (they keep containers running across restarts): stop ours."""
    marker = str(node.containerd_socket).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command and command[0].endswith(b"containerd-shim-runc-v2") and marker in command:
            with suppress(ProcessLookupError):
                os.kill(int(proc.name), 9)


def _unmount(node: RealNode) -> None:
    """Every mount under the node's state (snapshots, pods' volumes), deepest first."""
    prefix = str(node.state) + "/"
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True, check=False)


def toml(config: dict[str, object], prefix: str = "") -> str:
    """The small TOML subset containerd's config needs: scalars, lists of strings and nested tables."""
    lines, tables = [], []
    for key, value in config.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables:
        name = f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key)
        text += f"\n[{name}]\n" + toml(value, name)
    return text


def _toml_key(key: str) -> str:
    return f'"{key}"' if "." in key else key


CONTAINERD = Step("containerd", _up, _down)
