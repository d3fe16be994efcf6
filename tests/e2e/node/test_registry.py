"""kompi's images from a private registry, as on a user's cluster: images/build.sh pushes to the real node's
registry (TLS from the local CA, a password), and the node pulls them through the pull Secret that
kompi:imagePullSecrets names. An image the node cannot pull fails `up` in about a minute, naming it."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.node_registry import NodeRegistry
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import allreduce
from tests.e2e.project import Project
from tests.images.conftest import BUILD_SCRIPT
from tests.images.podman import podman_env

NAMESPACE = "kompi-pulls"
SECRET = "registry-pull"
FLAVOR = "ompi5"
# `up` gives up on a pod that cannot pull after a minute in that state (kube/rollout.GIVE_UP_SECONDS); the
# kubelet's first pull attempts and the rollout's checks come on top
REPORTED_WITHIN_SECONDS = 150


@pytest.fixture(scope="module")
def registry(real_cluster: LocalCluster) -> NodeRegistry:
    return real_cluster.node.registry


@pytest.fixture(scope="module")
def pushed(registry: NodeRegistry, images: dict[str, str]) -> str:
    """kompi's ompi5 image in the node's registry; its name there."""
    name = push(registry, FLAVOR)
    assert name == f"{registry.address}/kompi:{images[FLAVOR].split(':', 1)[1]}"
    return name


def push(registry: NodeRegistry, flavor: str) -> str:
    """``flavor``'s image pushed to ``registry`` by images/build.sh, as a user pushes it; its name there."""
    client = ["--authfile", str(registry.auth_file), "--cert-dir", str(registry.cert_dir)]
    result = subprocess.run(
        [str(BUILD_SCRIPT), "--push", registry.address, *client, flavor],
        capture_output=True,
        text=True,
        env={**podman_env(), "PYTHON": sys.executable},
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ((pushed_flavor, name),) = [line.split() for line in result.stdout.splitlines() if line.strip()]
    assert pushed_flavor == flavor and name.startswith(f"{registry.address}/kompi:")
    return name


def pull_secret(
    node_kubectl: Kubectl, auth_file: Path, namespace: str = NAMESPACE, password: str | None = None
) -> None:
    """A kubernetes.io/dockerconfigjson Secret from the registry's auth file (with another password if given)."""
    config = json.loads(auth_file.read_text())
    if password is not None:
        for entry in config["auths"].values():
            user = base64.b64decode(entry["auth"]).decode().split(":", 1)[0]
            entry["auth"] = base64.b64encode(f"{user}:{password}".encode()).decode()
    data = base64.b64encode(json.dumps(config).encode()).decode()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": SECRET, "namespace": namespace},
        "data": {".dockerconfigjson": data},
    }
    node_kubectl.run("apply", "-f", "-", input_text=json.dumps(secret))


@pytest.fixture
def pulls_namespace(stack_namespace) -> str:
    """The stack's namespace, made beforehand: the pull Secret must be there before the pods."""
    return stack_namespace(NAMESPACE)


def registry_stack(node_project, name: str, **settings: object) -> Project:
    repository, tag = name.rsplit(":", 1)
    return node_project(
        "dev", tag, image=repository, namespace=NAMESPACE, createNamespace=False, imagePullSecrets=[SECRET], **settings
    )


def test_the_registry_asks_for_its_password(registry: NodeRegistry, images: dict[str, str], tmp_path: Path) -> None:
    anonymous = tmp_path / "auth.json"
    anonymous.write_text('{"auths": {}}')
    client = ["--authfile", str(anonymous), "--cert-dir", str(registry.cert_dir)]
    result = subprocess.run(
        ["podman", "push", *client, images[FLAVOR], f"docker://{registry.address}/kompi:anonymous"],
        capture_output=True,
        text=True,
        env=podman_env(),
        timeout=300,
        check=False,
    )
    assert result.returncode != 0
    assert "authentication required" in result.stderr or "unauthorized" in result.stderr.lower(), result.stderr


def test_kompi_pulls_its_image_from_the_private_registry_and_runs_a_job(
    pulls_namespace: str, node_project, node_kubectl: Kubectl, registry: NodeRegistry, pushed: str
) -> None:
    pull_secret(node_kubectl, registry.auth_file)
    project = registry_stack(node_project, pushed)

    out = project.last_json(project.kompi("up"))

    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, pulls_namespace), 120)
    for pod in node_kubectl.items("pods", pulls_namespace):
        for container in pod["status"]["containerStatuses"]:
            assert container["image"] == pushed
            assert container["imageID"].startswith(f"{registry.address}/kompi@sha256:")  # pulled, not loaded
    reports = allreduce(node_kubectl, pulls_namespace, out["masterPod"], 2)
    assert {report["hostname"] for report in reports} == {"kompi-dev-worker-0", "kompi-dev-worker-1"}


@pytest.mark.parametrize("case", ["wrong password", "no such tag", "no such registry"])
def test_an_image_the_node_cannot_pull_fails_up_in_about_a_minute_naming_it(
    pulls_namespace: str, node_project, node_kubectl: Kubectl, registry: NodeRegistry, pushed: str, case: str
) -> None:
    repository, tag = pushed.rsplit(":", 1)
    image, kubelet_says = {
        "wrong password": (pushed, "401 Unauthorized"),
        "no such tag": (f"{repository}:no-such-tag", "not found"),
        # what a cluster without kompi's image has
        "no such registry": (f"localhost/kompi:{tag}-not-loaded", "connection refused"),
    }[case]
    pull_secret(node_kubectl, registry.auth_file, password="wrong" if case == "wrong password" else None)
    # Always: the node asks the registry even where an earlier test left the image in its store
    project = registry_stack(node_project, image, imagePullPolicy="Always")

    stderr = project.up_that_fails(within_seconds=REPORTED_WITHIN_SECONDS)

    assert f"the node cannot pull {image}" in stderr
    assert "kompi:imagePullSecrets" in stderr  # the fix
    assert "ErrImagePull" in stderr or "ImagePullBackOff" in stderr
    assert kubelet_says in stderr, stderr[-2000:]  # the reason, as docs/troubleshooting quotes it
