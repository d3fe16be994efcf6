"""SSH keys on a real node: the modes and owners the kubelet really gives the Secret's files (fsGroup),
sshd's StrictModes accepting them, and key rotation with no window in which jobs fail."""

from __future__ import annotations

import base64

from kompi_components import contract
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import allreduce, exec_in
from tests.e2e.project import Project

SECRET_FILES = (
    contract.SSH_CLIENT_KEY,
    contract.SSH_CLIENT_PUBLIC_KEY,
    contract.SSH_AUTHORIZED_KEYS,
    contract.SSH_HOST_KEY,
    contract.SSH_HOST_PUBLIC_KEY,
    contract.SSH_KNOWN_HOSTS,
)
PODS = ("kompi-dev-master-0", "kompi-dev-worker-0", "kompi-dev-worker-1")


def stat(kubectl: Kubectl, namespace: str, pod: str, *paths: str) -> dict[str, str]:
    """``path -> "mode uid gid"`` as the pod sees them (following the kubelet's ..data symlinks)."""
    script = 'for f in "$@"; do printf "%s %s\\n" "$f" "$(stat -L -c "%a %u %g" "$f")"; done'
    lines = exec_in(kubectl, namespace, pod, "sh", "-c", script, "stat", *paths).splitlines()
    return dict(line.split(" ", 1) for line in lines)


def test_secret_files_as_the_kubelet_mounts_them_and_as_sshd_wants_them(
    node_project, node_kubectl: Kubectl, images
) -> None:
    project: Project = node_project("dev", images["ompi4"].split(":", 1)[1])
    project.kompi("up")
    namespace = project.config()["kompi:namespace"]
    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)
    for pod in PODS:
        mounted = stat(node_kubectl, namespace, pod, *(f"{contract.SSH_SECRET_DIR}/{name}" for name in SECRET_FILES))
        # defaultMode 0400 plus group read for the pod's fsGroup, owned by root: no other user reads them
        assert set(mounted.values()) == {f"440 0 {contract.MPI_GID}"}, (pod, mounted)
        home = exec_in(node_kubectl, namespace, pod, "sh", "-c", "echo $HOME").strip()
        installed = stat(node_kubectl, namespace, pod, f"{home}/.ssh", *(f"{home}/.ssh/{n}" for n in SECRET_FILES))
        uid = f"{contract.MPI_UID} {contract.MPI_GID}"
        assert installed[f"{home}/.ssh"] == f"700 {uid}"
        for name in (contract.SSH_CLIENT_KEY, contract.SSH_HOST_KEY, contract.SSH_AUTHORIZED_KEYS):
            assert installed[f"{home}/.ssh/{name}"] == f"600 {uid}", (pod, name)
    config = exec_in(node_kubectl, namespace, PODS[1], "sh", "-c", 'cat "$HOME/.ssh/sshd_config"')
    assert "StrictModes yes" in config
    allreduce(node_kubectl, namespace, "kompi-dev-master-0", 2)  # sshd accepted those files


def test_key_rotation_leaves_no_window_in_which_jobs_fail(node_project, node_kubectl: Kubectl, images) -> None:
    project: Project = node_project("dev", images["ompi4"].split(":", 1)[1])
    project.kompi("up")
    namespace = project.config()["kompi:namespace"]
    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)
    allreduce(node_kubectl, namespace, "kompi-dev-master-0", 2)
    secret_name = "kompi-dev-ssh"
    old = node_kubectl.get("secret", secret_name, namespace)["data"]  # type: ignore[index]

    project.set(sshKeyVersion=2)
    project.kompi("up")
    # no wait: the moment `up` reports success, a job must run
    allreduce(node_kubectl, namespace, "kompi-dev-master-0", 2)
    new = node_kubectl.get("secret", secret_name, namespace)["data"]  # type: ignore[index]
    assert new[contract.SSH_CLIENT_PUBLIC_KEY] != old[contract.SSH_CLIENT_PUBLIC_KEY]
    expected = base64.b64decode(new[contract.SSH_CLIENT_PUBLIC_KEY]).decode().strip()
    host_key = base64.b64decode(new[contract.SSH_HOST_PUBLIC_KEY]).decode().split()[:2]
    for pod in PODS:
        public_key = f'cat "$HOME/.ssh/{contract.SSH_CLIENT_PUBLIC_KEY}"'
        installed = exec_in(node_kubectl, namespace, pod, "sh", "-c", public_key)
        assert installed.strip() == expected, pod
        # the host key sshd serves now (what a client verifies), not just the file on disk
        scan = f"ssh-keyscan -p {contract.SSH_PORT} -t ecdsa localhost 2>/dev/null"
        served = exec_in(node_kubectl, namespace, pod, "sh", "-c", scan)
        assert served.split()[1:3] == host_key, pod
