"""SSH trust between kompi pods: the Secret's known_hosts line (wildcard names with the port) is
honoured for this cluster's names only, a peer with another host key is refused, and so is a client
whose key is not in authorized_keys. sshd runs as the pod user with StrictModes and keys only.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from kompi_components import contract
from tests.images.cluster import CLUSTER, NAMESPACE, Pod, RunningCluster, render_cluster, running_cluster
from tests.images.podman import exec_in

pytestmark = pytest.mark.containers
HOST_KEY_FAILED = "Host key verification failed"
IMPOSTOR = f"{CLUSTER}-worker-7"
SHORT_DOMAIN_ALIAS = f"{CLUSTER}-worker-0.{CLUSTER}.{NAMESPACE}.svc"
OTHER_NAMESPACE_ALIAS = f"{CLUSTER}-worker-0.{CLUSTER}.elsewhere.svc.cluster.local"
# The impostor pod keeps the cluster's trust files but has its own client key and host key.
IMPOSTOR_OWN_FILES = (
    contract.SSH_CLIENT_KEY,
    contract.SSH_CLIENT_PUBLIC_KEY,
    contract.SSH_HOST_KEY,
    contract.SSH_HOST_PUBLIC_KEY,
)


def ssh(cluster: RunningCluster, from_pod: str, host: str) -> subprocess.CompletedProcess[str]:
    """``ssh HOST hostname`` from a pod, as its user, with only the image's client configuration."""
    return exec_in(cluster.container(from_pod), ["ssh", host, "hostname"], timeout=60)


def impostor(image: str, run_as_root: bool, real_secrets: dict[str, dict[str, str]]) -> tuple[Pod, dict]:
    """A pod named like one of the cluster's workers, with keys of another (fresh) identity."""
    other = render_cluster(image, workers=1, run_as_root=run_as_root)
    template = other.workers[0]
    spec = {**template.spec, "hostname": IMPOSTOR}
    pod = dataclasses.replace(template, name=IMPOSTOR, fqdn=f"{IMPOSTOR}.{other.names.service_domain}", spec=spec)
    (secret_name, real), (_, own) = next(iter(real_secrets.items())), next(iter(other.secrets.items()))
    files = {name: own[name] if name in IMPOSTOR_OWN_FILES else content for name, content in real.items()}
    return pod, {secret_name: files}


@pytest.mark.parametrize("run_as_root", [False, True], ids=["uid1000", "root"])
def test_host_keys_and_client_keys_are_checked(images: dict[str, str], run_as_root: bool, tmp_path: Path) -> None:
    rendered = render_cluster(images["ompi4"], workers=1, run_as_root=run_as_root)
    known_hosts = rendered.secrets[rendered.names.ssh_secret][contract.SSH_KNOWN_HOSTS]
    print(f"\nknown_hosts: {known_hosts.strip()}")
    worker, master = rendered.workers[0], rendered.master.name
    extra = impostor(images["ompi4"], run_as_root, rendered.secrets)
    aliases = {SHORT_DOMAIN_ALIAS: worker.name, OTHER_NAMESPACE_ALIAS: worker.name}
    with running_cluster(rendered, tmp_path, extra_pods=[extra], aliases=aliases) as cluster:
        trusted = ssh(cluster, master, worker.fqdn)
        short_domain = ssh(cluster, master, SHORT_DOMAIN_ALIAS)
        wrong_host_key = ssh(cluster, master, extra[0].fqdn)
        other_namespace = ssh(cluster, master, OTHER_NAMESPACE_ALIAS)
        by_address = ssh(cluster, master, cluster.addresses[worker.name])
        wrong_client_key = ssh(cluster, IMPOSTOR, worker.fqdn)
    assert (trusted.returncode, trusted.stdout.strip()) == (0, worker.name), trusted.stderr
    assert (short_domain.returncode, short_domain.stdout.strip()) == (0, worker.name), short_domain.stderr
    assert wrong_host_key.returncode == 255
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in wrong_host_key.stderr
    assert HOST_KEY_FAILED in wrong_host_key.stderr
    for refused in (other_namespace, by_address):
        assert refused.returncode == 255
        assert "No ECDSA host key is known" in refused.stderr
        assert HOST_KEY_FAILED in refused.stderr
    assert wrong_client_key.returncode == 255
    assert "Permission denied (publickey)" in wrong_client_key.stderr


def sshd_settings(cluster: RunningCluster, pod: str) -> dict[str, str]:
    """sshd's effective configuration (``sshd -T``) for the config the entrypoint wrote."""
    result = exec_in(cluster.container(pod), ["sh", "-c", '/usr/sbin/sshd -T -f "$HOME/.ssh/sshd_config"'])
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)


def file_modes(cluster: RunningCluster, pod: str, paths: str) -> list[str]:
    """``stat`` lines (mode owner:group name) of the paths, following the Secret's symlinks."""
    result = exec_in(cluster.container(pod), ["sh", "-c", f"stat -L -c '%a %u:%g %n' {paths}"])
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize("run_as_root", [False, True], ids=["uid1000", "root"])
def test_sshd_runs_as_pod_user_with_strict_modes_and_keys_only(
    images: dict[str, str], run_as_root: bool, tmp_path: Path
) -> None:
    rendered = render_cluster(images["ompi5"], workers=1, run_as_root=run_as_root)
    worker = rendered.workers[0].name
    uid = "0" if run_as_root else str(contract.MPI_UID)
    home = "/root" if run_as_root else contract.MPI_HOME
    with running_cluster(rendered, tmp_path) as cluster:
        settings = sshd_settings(cluster, worker)
        pid1 = exec_in(cluster.container(worker), ["sh", "-c", "stat -c '%u' /proc/1 && cat /proc/1/comm"])
        secret = file_modes(cluster, worker, f"{contract.SSH_SECRET_DIR}/{contract.SSH_CLIENT_KEY}")
        copied = file_modes(cluster, worker, f"{home}/.ssh {home}/.ssh/{contract.SSH_HOST_KEY}")
    assert pid1.stdout.split() == [uid, "sshd"]
    assert settings["port"] == str(contract.SSH_PORT)
    assert settings["strictmodes"] == "yes"
    assert settings["passwordauthentication"] == "no"
    assert settings["kbdinteractiveauthentication"] == "no"
    assert settings["pubkeyauthentication"] == "yes"
    assert settings["permitrootlogin"] in ("prohibit-password", "without-password")
    assert settings["hostkey"] == f"{home}/.ssh/{contract.SSH_HOST_KEY}"
    group = "0" if run_as_root else str(contract.MPI_GID)
    assert secret == [f"440 0:{group} {contract.SSH_SECRET_DIR}/{contract.SSH_CLIENT_KEY}"]
    assert copied == [f"700 {uid}:{group} {home}/.ssh", f"600 {uid}:{group} {home}/.ssh/{contract.SSH_HOST_KEY}"]
