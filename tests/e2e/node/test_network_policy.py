"""kompi's default-on NetworkPolicy, enforced on the real node (kube-router's policy controller): a pod
without the cluster's labels cannot reach a worker's sshd; a kompi pod can, and so can the same pod once
it carries the cluster's labels."""

from __future__ import annotations

from typing import Any

import yaml

from kompi_components import contract
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.conftest import SMALL_POD
from tests.e2e.node.mpi import run_in
from tests.e2e.project import Project


def outsider(namespace: str, image: str) -> dict[str, Any]:
    """A pod in the cluster's namespace, from the same image, that Pod Security admits, with no kompi labels."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "outsider", "namespace": namespace, "labels": {"app": "outsider"}},
        "spec": {
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": contract.MPI_UID,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "mpi",
                    "image": image,
                    "command": ["sleep", "600"],
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    **SMALL_POD,
                }
            ],
            "terminationGracePeriodSeconds": 1,
        },
    }


def reaches(kubectl: Kubectl, namespace: str, pod: str, address: str) -> bool:
    """Whether ``pod`` opens a TCP connection to ADDRESS:ssh port within 3 s."""
    probe = f"echo > /dev/tcp/{address}/{contract.SSH_PORT}"
    result = run_in(kubectl, namespace, pod, "timeout", "3", "bash", "-c", probe, timeout=60)
    return result.returncode == 0


def test_only_the_clusters_pods_reach_a_workers_sshd(node_project, node_kubectl: Kubectl, images) -> None:
    project: Project = node_project("dev", images["ompi4"].split(":", 1)[1])
    project.kompi("up")
    namespace = project.config()["kompi:namespace"]
    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)
    worker_ip = node_kubectl.get("pod", "kompi-dev-worker-0", namespace)["status"]["podIP"]  # type: ignore[index]
    assert reaches(node_kubectl, namespace, "kompi-dev-master-0", worker_ip)

    node_kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump(outsider(namespace, images["ompi4"])))
    wait_until("the outsider Ready", lambda: pods_ready(node_kubectl, namespace), 120)
    assert not reaches(node_kubectl, namespace, "outsider", worker_ip)

    # the same pod with the cluster's labels is let in: the policy, not the network, kept it out
    policy = node_kubectl.get("networkpolicy", "kompi-dev", namespace)
    labels = [f"{key}={value}" for key, value in policy["spec"]["podSelector"]["matchLabels"].items()]  # type: ignore[index]
    node_kubectl.run("label", "pod", "outsider", "-n", namespace, *labels)
    wait_until("the relabelled pod let in", lambda: reaches(node_kubectl, namespace, "outsider", worker_ip), 30)
    node_kubectl.run("delete", "pod", "outsider", "-n", namespace, "--wait=false")
