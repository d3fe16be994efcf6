"""The stack's cluster, everywhere: a stack that names its cluster (`kubernetes:context`, `kubernetes:kubeconfig`)
in a kubeconfig whose current context points at nothing. The provider and kompi's own kubectl checks (the API
watch, the rollout wait) must all reach the stack's cluster, or `up` fails or is cancelled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.project import Project, assert_live_equals_render

DEAD_SERVER = "https://127.0.0.1:1"  # nothing listens there


def with_dead_context(live: dict[str, Any], current: str) -> dict[str, Any]:
    """The local cluster's kubeconfig plus a context `dead` on the same credentials; ``current`` is current."""
    (cluster,), (context,) = live["clusters"], live["contexts"]
    dead = {"name": "dead", "cluster": {**cluster["cluster"], "server": DEAD_SERVER}}
    return live | {
        "clusters": [cluster, dead],
        "contexts": [context, {"name": "dead", "context": {**context["context"], "cluster": "dead"}}],
        "current-context": current,
    }


# how a Pulumi state file marks a secret value
SECRET_SIGNATURE, SECRET_VALUE = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"


def states(project: Project) -> list[Path]:
    return list((project.directory / "state").rglob("*.json"))


def kept_kubeconfigs(project: Project) -> list[Any]:
    """The ``kubeconfig`` output of every rollout step (kompi's dynamic resources) in the stack's state."""
    (path,) = [path for path in states(project) if "stacks" in path.parts and path.name == f"{project.stack}.json"]
    resources = json.loads(path.read_text())["checkpoint"]["latest"]["resources"]
    steps = [resource for resource in resources if resource["type"] == "pulumi-python:dynamic:Resource"]
    return [step["outputs"]["kubeconfig"] for step in steps if "kubeconfig" in step.get("outputs", {})]


def only_dead(live: dict[str, Any]) -> dict[str, Any]:
    config = with_dead_context(live, "dead")
    return config | {
        "clusters": config["clusters"][1:],
        "contexts": config["contexts"][1:],
    }


@pytest.mark.parametrize("names_it_by", ["context", "kubeconfig path", "kubeconfig text"])
def test_up_reaches_the_cluster_the_stack_names_not_the_current_context(
    names_it_by: str, project_factory, cluster: LocalCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    live = yaml.safe_load(cluster.kubeconfig.read_text())
    live_context = live["current-context"]
    project: Project = project_factory("dev")
    two_contexts = with_dead_context(live, current="dead")
    provider: dict[str, str] = {"kubernetes:context": live_context}
    if names_it_by == "context":
        environment = two_contexts
    else:  # the kubeconfig of the stack config, not $KUBECONFIG's
        environment = only_dead(live)
        if names_it_by == "kubeconfig path":
            (project.directory / "clusters.yaml").write_text(yaml.safe_dump(two_contexts))
            provider["kubernetes:kubeconfig"] = "clusters.yaml"  # relative: the project directory's
        else:
            provider["kubernetes:kubeconfig"] = yaml.safe_dump(two_contexts)
    (tmp_path / "current-is-dead.yaml").write_text(yaml.safe_dump(environment))
    settings = yaml.safe_load(project.stack_file.read_text())
    settings["config"].update(provider)
    project.stack_file.write_text(yaml.safe_dump(settings, sort_keys=False))
    # the API watch would cancel within two checks (10 s) if it asked the dead server
    project.env |= {"KUBECONFIG": str(tmp_path / "current-is-dead.yaml"), "KOMPI_API_LOST_AFTER": "1"}

    result = project.kompi("up")

    assert "has not answered" not in result.stderr
    # the rollout wait read the master's pod and its node there
    assert "[kompi] kompi-dev-master-0 runs on a kwok node" in result.stderr
    assert_live_equals_render(kubectl, project)
    assert set(project.last_json(project.kompi("preview"))) == {"same"}
    # the steps keep the kubeconfig for their delete, as a secret only
    kept = kept_kubeconfigs(project)
    assert len(kept) == 2  # master and workers
    assert all(isinstance(output, dict) and output.get(SECRET_SIGNATURE) == SECRET_VALUE for output in kept), kept
    assert not any("current-context: dead" in json.dumps(output) for output in kept)
    project.kompi("destroy")  # the steps' delete reaches the stack's cluster too
