"""The master's hostfile follows the workers on a real node: scaling, a worker pod deleted, and the master
pod deleted (it comes back and rebuilds the hostfile)."""

from __future__ import annotations

import re
import time

from kompi_components.kube.conditions import is_ready
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import allreduce, hostfile_hosts, run_in
from tests.e2e.project import Project

# kompi's discovery polls about once a second; the promise is "within 2 s of Ready"
CONVERGENCE_LIMIT = 2.0


def pod_ready(kubectl: Kubectl, namespace: str, pod: str) -> bool:
    live = kubectl.get("pod", pod, namespace)
    return live is not None and is_ready(live)


def workers_in(hosts: list[str]) -> set[str]:
    return {host.split(".", 1)[0] for host in hosts}


def hostfile_sizes(kubectl: Kubectl, namespace: str, master: str) -> list[int]:
    """Every size the master's discovery wrote its hostfile at, in order (its log says each change)."""
    log = kubectl.run("logs", "-n", namespace, master, "-c", "mpi").stdout
    return [int(count) for count in re.findall(r"hostfile: (\d+) workers", log)]


def seconds_from_ready_to_hostfile(kubectl: Kubectl, namespace: str, master: str, worker: str) -> float:
    """Watch ``worker`` become Ready, then its name appear in the master's hostfile; the gap in seconds."""
    wait_until(f"{worker} Ready", lambda: pod_ready(kubectl, namespace, worker), 180)
    ready_at = time.monotonic()
    wait_until(
        f"{worker} in the hostfile", lambda: worker in workers_in(hostfile_hosts(kubectl, namespace, master)), 30
    )
    return time.monotonic() - ready_at


def test_hostfile_follows_scaling_and_a_deleted_worker(node_project, node_kubectl: Kubectl, images) -> None:
    project: Project = node_project("dev", images["ompi4"].split(":", 1)[1])
    master = project.last_json(project.kompi("up"))["masterPod"]
    namespace = project.config()["kompi:namespace"]
    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)
    assert workers_in(hostfile_hosts(node_kubectl, namespace, master)) == {"kompi-dev-worker-0", "kompi-dev-worker-1"}

    # 2 -> 3 while the master runs
    project.set(workers=3)
    running = project.start("up")
    gap = seconds_from_ready_to_hostfile(node_kubectl, namespace, master, "kompi-dev-worker-2")
    assert running.wait(300) == 0, running.stderr.read() if running.stderr else ""
    print(f"\nhostfile has the new worker {gap:.2f} s after it became Ready")
    assert gap <= CONVERGENCE_LIMIT
    assert len({r["hostname"] for r in allreduce(node_kubectl, namespace, master, 3)}) == 3

    # 3 -> 2: the hostfile drops the worker, the next 2-rank job launches without a failure
    project.set(workers=2)
    project.kompi("up")
    wait_until(
        "worker-2 out of the hostfile",
        lambda: "kompi-dev-worker-2" not in workers_in(hostfile_hosts(node_kubectl, namespace, master)),
        30,
    )
    assert len(allreduce(node_kubectl, namespace, master, 2)) == 2

    # a worker pod deleted: the StatefulSet recreates it, and the hostfile has the new pod once it is Ready.
    # Whether the hostfile drops it meanwhile depends on how long it was away: a pod back within 3 sweeps is
    # kept by design (a stray NXDOMAIN must not drop a worker), as it is when it restarts fast on a loaded
    # machine; the drop of a worker gone for good is the scale-down's above. The master's log says each size.
    old_uid = node_kubectl.get("pod", "kompi-dev-worker-1", namespace)["metadata"]["uid"]  # type: ignore[index]
    written = len(hostfile_sizes(node_kubectl, namespace, master))
    node_kubectl.run("delete", "pod", "-n", namespace, "kompi-dev-worker-1", "--wait=false")
    wait_until(
        "a new worker-1",
        lambda: (
            (node_kubectl.get("pod", "kompi-dev-worker-1", namespace) or {}).get("metadata", {}).get("uid")
            not in (None, old_uid)
        ),
        60,
    )
    gap = seconds_from_ready_to_hostfile(node_kubectl, namespace, master, "kompi-dev-worker-1")
    sizes = hostfile_sizes(node_kubectl, namespace, master)[written:]
    print(f"hostfile has the recreated worker {gap:.2f} s after it became Ready; its sizes meanwhile: {sizes}")
    assert gap <= CONVERGENCE_LIMIT
    assert set(sizes) <= {1, 2} and sizes[-1:] in ([], [2]), f"the hostfile's sizes after the delete: {sizes}"
    assert {r["hostname"] for r in allreduce(node_kubectl, namespace, master, 2)} == {
        "kompi-dev-worker-0",
        "kompi-dev-worker-1",
    }

    # the master deleted while idle: the StatefulSet brings it back, it rebuilds its hostfile from DNS alone
    old_master = node_kubectl.get("pod", master, namespace)["metadata"]["uid"]  # type: ignore[index]
    node_kubectl.run("delete", "pod", "-n", namespace, master, "--wait=false")
    wait_until(
        "a new master, Ready",
        lambda: (
            (live := node_kubectl.get("pod", master, namespace)) is not None
            and live["metadata"]["uid"] != old_master
            and is_ready(live)
        ),
        120,
    )
    listed = "grep -v '^#' $KOMPI_HOSTFILE 2>/dev/null | cut -d. -f1 | sort"  # nothing until discovery has written it
    wait_until(
        "both workers in the new master's hostfile",
        lambda: (
            run_in(node_kubectl, namespace, master, "sh", "-c", listed).stdout.split()
            == ["kompi-dev-worker-0", "kompi-dev-worker-1"]
        ),
        30,
    )
    assert len(allreduce(node_kubectl, namespace, master, 2)) == 2
