"""Each stack through the real engine: `up` creates exactly what the render prints, pods become Ready,
then preview and refresh find nothing to change and destroy leaves nothing (a local API server, kwok nodes)."""

from __future__ import annotations

import pytest

from kompi_components import contract
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.project import ONE_SHOT, Project, assert_live_equals_render


def assert_nothing_left(kubectl: Kubectl, namespace: str) -> None:
    """The namespace, its claims and the volumes bound to them are gone."""

    def volumes_of_namespace() -> list[str]:
        volumes = kubectl.json("get", "pv")["items"]
        return [
            v["metadata"]["name"] for v in volumes if (v["spec"].get("claimRef") or {}).get("namespace") == namespace
        ]

    wait_until(f"namespace {namespace} deleted", lambda: kubectl.get("namespace", namespace, None) is None, 90)
    wait_until(f"the volumes of {namespace}'s claims deleted", lambda: not volumes_of_namespace(), 60)


@pytest.mark.parametrize("stack", ["dev", "gpu", "data", "oneshot"])
def test_up_creates_the_render_then_nothing_changes_and_destroy_leaves_nothing(
    stack: str, project_factory, kubectl: Kubectl
) -> None:
    project: Project = project_factory(stack, source_stack="dev" if stack == "oneshot" else None)
    if stack == "oneshot":
        project.set(clusterName="kompi-oneshot", namespace="kompi-oneshot", oneShot=ONE_SHOT)
    config = project.config()
    namespace, cluster = config["kompi:namespace"], config["kompi:clusterName"]

    outputs = project.last_json(project.kompi("up"))

    assert_live_equals_render(kubectl, project)
    wait_until(f"the pods of {stack} Ready", lambda: pods_ready(kubectl, namespace), 90)
    assert outputs["namespace"] == namespace
    assert outputs["workers"] == int(config["kompi:workers"])
    assert outputs["sshPublicKey"].startswith("ecdsa-sha2-nistp256 ")
    assert outputs["firstJob"].startswith("kubectl ")
    secret = kubectl.get("secret", f"{cluster}-ssh", namespace)
    assert secret is not None and sorted(secret["data"]) == sorted(contract.SSH_SECRET_KEYS)

    assert set(project.last_json(project.kompi("preview"))) == {"same"}
    refreshed = project.last_json(project.kompi("refresh"))
    assert set(refreshed) == {"same"}, f"refresh found drift: {refreshed}"

    destroyed = project.last_json(project.kompi("destroy"))
    assert set(destroyed) == {"delete"}
    assert_nothing_left(kubectl, namespace)
