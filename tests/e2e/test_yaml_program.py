"""examples/yaml (a `runtime: yaml` program declaring kompi:index:Cluster) through the real `pulumi` command:
stack init, up, preview (no changes), an image change that rolls the pods, destroy (nothing left).

It runs kompi as a component package: the YAML language host built from the Go module proxy, the
pulumi-resource-kompi provider from kompi's wheel, the program's own Kubernetes provider and namespace
handed to the cluster, and the rollout step (a Python dynamic resource made inside the provider) reaching
that cluster through the `kubeconfig` argument while KUBECONFIG names no file.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_components.kube.conditions import is_ready
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.pulumi_cli import PulumiCli, install_kompi
from tests.stacks import REPO

EXAMPLE = REPO / "examples" / "yaml"
NAMESPACE = "kompi-yaml"  # the example's own namespace


@pytest.fixture
def cli(cluster: LocalCluster, engine_bin: Path, tmp_path: Path) -> Iterator[PulumiCli]:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    pulumi = PulumiCli(project, engine_bin, install_kompi(tmp_path / "kompi"), tmp_path / "home")
    yield pulumi
    pulumi.run("destroy", "--yes", check=False)


def _mpi_pods(kubectl: Kubectl) -> dict[str, dict[str, str]]:
    pods = kubectl.items("pods", NAMESPACE, "app.kubernetes.io/name=kompi")
    return {
        pod["metadata"]["name"]: {
            "uid": pod["metadata"]["uid"],
            "image": pod["spec"]["containers"][0]["image"],
            "ready": str(is_ready(pod)),
        }
        for pod in pods
    }


def _timed(durations: dict[str, float], step: str, cli: PulumiCli, *args: str) -> str:
    started = time.monotonic()
    out = cli.run(*args).stdout
    durations[step] = round(time.monotonic() - started, 1)
    return out


def test_the_yaml_example_through_the_pulumi_cli(cli: PulumiCli, cluster: LocalCluster, kubectl: Kubectl) -> None:
    durations: dict[str, float] = {}
    cli.run("stack", "init", "dev")
    cli.run("config", "set", "kubeconfig", str(cluster.kubeconfig))
    _timed(durations, "up", cli, "up", "--yes")

    outputs = cli.outputs()
    assert outputs["masterPod"] == "train-master-0" and outputs["totalSlots"] == 2
    assert outputs["firstJob"] == f"kubectl exec -n {NAMESPACE} train-master-0 -c mpi -- mpiexec -n 2 hostname"
    # `up` returned once the rollout step saw every pod Ready
    made = _mpi_pods(kubectl)
    assert sorted(made) == ["train-master-0", "train-worker-0", "train-worker-1"]
    assert all(pod["ready"] == "True" for pod in made.values()), made
    assert kubectl.items("pvc", NAMESPACE) == []

    _timed(durations, "preview", cli, "preview", "--expect-no-changes")

    cli.run("config", "set", "imageTag", "5.0.11-bookworm-0.1.0")
    _timed(durations, "up (new image)", cli, "up", "--yes")
    rolled = _mpi_pods(kubectl)
    assert sorted(rolled) == sorted(made)
    assert all(rolled[name]["uid"] != made[name]["uid"] for name in made), "every pod rolled"
    assert {pod["image"] for pod in rolled.values()} == {"localhost/kompi:5.0.11-bookworm-0.1.0"}
    assert all(pod["ready"] == "True" for pod in rolled.values()), rolled

    _timed(durations, "destroy", cli, "destroy", "--yes")
    assert cli.resources() == []
    assert kubectl.run("get", "namespace", NAMESPACE, check=False).returncode != 0
    print(f"pulumi CLI durations (s): {durations}")


def test_a_bad_value_stops_up_with_the_config_line(cli: PulumiCli, cluster: LocalCluster) -> None:
    program = cli.project / "Pulumi.yaml"
    program.write_text(program.read_text().replace("workers: 2", "workers: -1"))
    cli.run("stack", "init", "dev")
    cli.run("config", "set", "kubeconfig", str(cluster.kubeconfig))
    result = cli.run("up", "--yes", check=False)
    assert result.returncode != 0
    assert "invalid config kompi:workers = -1: expected a number >= 0" in result.stdout
    assert [r["type"] for r in cli.resources() if r["type"].startswith("kubernetes:core")] == []


def test_pods_that_cannot_start_fail_up_with_kompi_line_not_a_traceback(cli: PulumiCli, cluster: LocalCluster) -> None:
    """The rollout step runs in Pulumi's own dynamic provider process, which reports a failure as a Python
    traceback unless kompi's provider makes its own failures one line (components/dynamic_provider.py)."""
    program = cli.project / "Pulumi.yaml"
    unschedulable = "workerPod:\n        nodeSelector: {kompi.test/nowhere: 'true'}\n"
    text = program.read_text().replace("workerPod:\n", unschedulable)
    program.write_text(text.replace("      workers: 2\n", "      workers: 2\n      stuckPodTimeoutSeconds: 10\n"))
    cli.run("stack", "init", "dev")
    cli.run("config", "set", "kubeconfig", str(cluster.kubeconfig))
    result = cli.run("up", "--yes", check=False)
    printed = result.stdout + result.stderr
    assert result.returncode != 0, printed[-3000:]
    assert "RolloutError: StatefulSet train-worker: 2 of 2 pods cannot start" in printed, printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
