"""Each setup of kube-openmpi's README, imported from its values file, rendered and checked.

Every object is validated against the Kubernetes schemas (strict), and each test checks the
properties that its setup is about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kompi_components import contract
from tests.manifests.pod_security import RULES, pod_specs
from tests.migrate.helpers import FIXTURES, Kompi, Run, find, mpi_container, pod_spec, render

SETUPS = {
    "quick-start": ["quick-start.yaml", "ssh-key.yaml"],
    "non-root": ["non-root.yaml"],
    "gang-scheduling": ["gang-scheduling.yaml"],
    "private-git": ["private-git.yaml"],
    "private-registry": ["private-registry.yaml"],
    "chainermn-gpu": ["chainermn-gpu.yaml"],
    "one-shot": ["one-shot.yaml"],
}


def import_setup(kompi: Kompi, project: Path, setup: str, *options: str) -> tuple[Run, list[dict[str, Any]]]:
    files = [FIXTURES / name for name in SETUPS[setup]]
    run = kompi("import-values", *files, "--stack", setup, "--dir", project, *options)
    assert run.code == 0, run.err
    assert all(line.startswith("warning: ") for line in run.err_lines), run.err
    return run, render(kompi, project, setup)


def workers_and_master(objects: list[dict[str, Any]], cluster: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return find(objects, "StatefulSet", f"{cluster}-worker"), find(objects, "StatefulSet", f"{cluster}-master")


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_every_setup_imports_and_renders_without_edits(kompi: Kompi, project: Path, setup: str) -> None:
    run, objects = import_setup(kompi, project, setup)
    text = (project / f"Pulumi.{setup}.yaml").read_text()
    assert text.startswith(f"# kompi stack '{setup}', imported from kube-openmpi values: ")
    assert str(FIXTURES / SETUPS[setup][0]) in text.splitlines()[0]
    assert f"wrote {project / f'Pulumi.{setup}.yaml'}" in run.out
    # Nothing needs the Kubernetes API (but a one-shot run that releases its workers).
    if setup != "one-shot":
        assert not {"ServiceAccount", "Role", "RoleBinding", "ClusterRole"} & {m["kind"] for m in objects}
        for _, spec in pod_specs(objects):
            assert spec["automountServiceAccountToken"] is False


def test_quick_start_keeps_four_workers_and_drops_the_ssh_key(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "quick-start", "--release", "mpi")
    workers, master = workers_and_master(objects, "mpi")
    assert workers["spec"]["replicas"] == 4
    assert master["spec"]["replicas"] == 1
    assert "NetworkPolicy" not in {m["kind"] for m in objects}  # networkPolicy.enabled: false
    # kube-openmpi's image cannot run kompi pods: the stack uses kompi's.
    assert mpi_container(workers)["image"].startswith("localhost/kompi:")
    assert len(run.warnings_for("image.repository")) == 1
    # The key from ssh-key.yaml is neither written nor rendered; the command says so once.
    assert len(run.warnings_for("sshKey")) == 1
    assert "not imported" in run.warnings_for("sshKey")[0]
    text = (project / "Pulumi.quick-start.yaml").read_text()
    assert "FAKE" not in text and "sshKey" not in text.split("config:")[1]
    secret = find(objects, "Secret", "mpi-ssh")
    assert not any("FAKE" in value for value in secret["stringData"].values())
    # kube-openmpi ran as root by default; kompi does not, and says so.
    assert pod_spec(workers)["securityContext"]["runAsUser"] == contract.MPI_UID
    assert run.warnings_for("mpiWorkers.securityContext")
    assert run.warnings_for("mpiMaster.securityContext")


def test_non_root_runs_as_uid_1000_and_meets_pod_security_restricted(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "non-root")
    workers, master = workers_and_master(objects, "non-root")
    assert workers["spec"]["replicas"] == 3
    for statefulset in (workers, master):
        context = pod_spec(statefulset)["securityContext"]
        assert context["runAsNonRoot"] is True
        assert (context["runAsUser"], context["runAsGroup"], context["fsGroup"]) == (1000, 1000, 1000)
    assert not run.warnings_for("mpiWorkers.securityContext")
    assert not run.warnings_for("mpiMaster.securityContext")
    for name, spec in pod_specs(objects):
        for rule, check in RULES.items():
            assert check(spec) == [], f"{name} breaks {rule}"


def test_gang_scheduling_uses_kube_batchd_and_a_pdb_over_the_whole_gang(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "gang-scheduling", "--release", "gang")
    workers, master = workers_and_master(objects, "gang")
    assert pod_spec(workers)["schedulerName"] == "kube-batchd"
    assert pod_spec(master)["schedulerName"] == "kube-batchd"
    budget = find(objects, "PodDisruptionBudget", "gang")
    assert budget["apiVersion"] == "policy/v1"
    assert budget["spec"]["minAvailable"] == 4 + 1  # the workers and the master
    selector = budget["spec"]["selector"]["matchLabels"]
    assert "app.kubernetes.io/component" not in selector  # selects master and workers
    for statefulset in (workers, master):
        assert selector.items() <= statefulset["spec"]["template"]["metadata"]["labels"].items()
    [budget_warning] = run.warnings_for("mpiWorkers.customScheduling.podDisruptionBudget")
    assert "kube-batch is retired" in budget_warning
    assert "move to kompi:gangScheduling.mode scheduler-plugins" in budget_warning
    assert find(objects, "NetworkPolicy", "gang")  # networkPolicy.enabled: true


def test_private_git_fetches_over_ssh_with_the_deploy_key_and_checks_host_keys(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "private-git", "--release", "train")
    for statefulset in workers_and_master(objects, "train"):
        spec = pod_spec(statefulset)
        (init,) = spec["initContainers"]
        # kompi's own fetcher, from the MPI image: no git-sync image to mirror
        assert init["image"] == statefulset["spec"]["template"]["spec"]["containers"][0]["image"]
        assert init["command"][0] == "kompi-fetch-code"
        for arg in (
            "--repo=git@github.example.com:research/trainer.git",
            "--ref=release-1",
            "--ssh-key=/etc/git-secret/ssh",
            "--known-hosts=/etc/git-secret/known_hosts",
            "--retry-wait=120",
        ):
            assert arg in init["command"]
        assert "--insecure-skip-host-key-check" not in init["command"]
        secret_volumes = [v for v in spec["volumes"] if v.get("secret", {}).get("secretName") == "git-deploy-key"]
        assert len(secret_volumes) == 1
        assert {"name": secret_volumes[0]["name"], "mountPath": "/etc/git-secret", "readOnly": True} in init[
            "volumeMounts"
        ]
        code = next(m for m in mpi_container(statefulset)["volumeMounts"] if m["mountPath"] == "/trainer")
        assert code["readOnly"] is True
        assert init["securityContext"]["allowPrivilegeEscalation"] is False  # not root, unlike kube-openmpi
    (line,) = run.warnings_for("appCodesToSync[0].gitSecretName")
    assert "known_hosts" in line


def test_private_registry_pulls_with_the_secret(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "private-registry", "--release", "reg")
    for statefulset in workers_and_master(objects, "reg"):
        assert pod_spec(statefulset)["imagePullSecrets"] == [{"name": "regcred"}]
        container = mpi_container(statefulset)
        assert container["image"] == "registry.example.com/research/openmpi-app:2.3"
        assert container["imagePullPolicy"] == "Always"
    (line,) = run.warnings_for("image.repository")
    assert "kompi-compatible image" in line


def test_chainermn_gpu_workers_get_the_gpu_limit_and_the_examples(kompi: Kompi, project: Path) -> None:
    _, objects = import_setup(kompi, project, "chainermn-gpu", "--release", "chainermn")
    workers, master = workers_and_master(objects, "chainermn")
    assert workers["spec"]["replicas"] == 2
    resources = mpi_container(workers)["resources"]
    assert resources["limits"] == {"memory": "8Gi", "nvidia.com/gpu": 1}
    assert resources["requests"] == {"cpu": "2"}
    assert mpi_container(master)["resources"] == {}  # the values give the master none: no GPU, nothing else
    env = {item["name"]: item["value"] for item in mpi_container(workers)["env"]}
    assert env[contract.ENV_SLOTS_PER_WORKER] == "1"
    for statefulset in (workers, master):
        mount = next(m for m in mpi_container(statefulset)["volumeMounts"] if m["mountPath"] == "/chainermn-examples")
        # kube-openmpi's subPath chainermn/examples named <name>/<dir>; kompi's checkout is "current".
        assert mount["subPath"] == "current/examples"
        assert mount["readOnly"] is True
        (init,) = pod_spec(statefulset)["initContainers"]
        assert "--repo=https://github.com/chainer/chainermn.git" in init["command"]
        assert "--ref=master" in init["command"]
        assert not any(arg.startswith(("--ssh", "--known-hosts")) for arg in init["command"])


def test_one_shot_runs_the_command_in_a_job_with_kompis_hostfile(kompi: Kompi, project: Path) -> None:
    run, objects = import_setup(kompi, project, "one-shot", "--release", "once")
    job = find(objects, "Job", "once-master")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    command = " ".join(container["args"])
    assert f"--hostfile {contract.HOSTFILE}" in command and "/kube-openmpi/" not in command
    assert "-n 2 -npernode 1 hostname" in command
    assert not [m for m in objects if m["kind"] == "StatefulSet" and m["metadata"]["name"] == "once-master"]
    # Releasing the workers needs only the scale of this cluster's worker StatefulSet.
    (role,) = [m for m in objects if m["kind"] == "Role"]
    assert role["rules"] == [
        {
            "apiGroups": ["apps"],
            "resources": ["statefulsets/scale"],
            "resourceNames": ["once-worker"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    assert "ClusterRole" not in {m["kind"] for m in objects}
    assert len(run.warnings_for("mpiMaster.oneShot.command")) == 1
    assert len(run.warnings_for("mpiMaster.oneShot")) == 1
