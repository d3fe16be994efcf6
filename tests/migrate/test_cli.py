"""import-values on the command line: exit codes, one-line errors, --force, warning lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.migrate.helpers import FIXTURES, Kompi, render, write_values
from tests.stacks import REPO


def import_values(kompi: Kompi, project: Path, values: dict[str, object], *options: str) -> tuple[object, Path]:
    path = write_values(project, values)
    return kompi("import-values", path, "--stack", "imported", "--dir", project, *options), project


def stack_config(stack_file: Path) -> dict[str, object]:
    """The stack file's ``config`` mapping, as Pulumi reads it."""
    config: dict[str, object] = yaml.safe_load(stack_file.read_text())["config"]
    return config


@pytest.mark.parametrize(
    ("values", "path"),
    [
        ({"mpiWorker": {"num": 2}}, "mpiWorker"),
        ({"mpiWorkers": {"nmu": 2}}, "mpiWorkers.nmu"),
        ({"mpiWorkers": {"customScheduling": {"podDisruptionBudget": {"minAvailable": 2}}}},
         "mpiWorkers.customScheduling.podDisruptionBudget.minAvailable"),
        ({"appCodesToSync": [{"name": "a", "gitRepo": "https://x/a.git", "mountPath": "/a"}, {"gitrepo": "x"}]},
         "appCodesToSync[1].gitrepo"),
        ({"image": {"pullSecrets": [{"name": "a", "namespace": "b"}]}}, "image.pullSecrets[0].namespace"),
    ],
)  # fmt: skip
def test_an_unknown_key_fails_with_its_path_and_exit_2(kompi: Kompi, project: Path, values, path: str) -> None:
    run, _ = import_values(kompi, project, values)
    assert run.code == 2
    assert run.err_lines == [run.err_lines[0]]
    assert run.err_lines[0].startswith(f"error: {path}: unknown kube-openmpi key")
    assert not (project / "Pulumi.imported.yaml").exists()


def test_an_unknown_key_suggests_the_close_one(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, {"mpiWorkers": {"nmu": 2}})
    assert "(did you mean mpiWorkers.num?)" in run.err


@pytest.mark.parametrize(
    ("values", "line"),
    [
        ({"mpiWorkers": {"num": -1}},
         "error: invalid config kompi:workers = -1: expected a number >= 0 (from mpiWorkers.num)"),
        ({"image": {"repository": "r.example.com/a", "pullPolicy": "Sometimes"}},
         "error: invalid config kompi:imagePullPolicy = \"Sometimes\": expected one of 'Always', 'IfNotPresent' "
         "or 'Never' (from image.pullPolicy)"),
        ({"appCodesToSync": [{"name": "app", "gitRepo": "https://x/app.git", "mountPath": "repo"}]},
         "error: invalid config kompi:appCode[0].mountPath = \"repo\": expected an absolute path "
         "(from appCodesToSync[0].mountPath)"),
        ({"image": {"repository": "Registry.example.com/ML/Train", "tag": "1.0"}},
         "error: invalid config kompi:image = \"Registry.example.com/ML/Train\": expected an image repository in "
         "lower case (only the registry host may have capitals), such as registry.example.com/ml/kompi "
         "(from image.repository)"),
        ({"image": {"repository": "r.example.com/train:1.0", "tag": "2.0"}},
         "error: invalid config kompi:image = \"r.example.com/train:1.0\": expected a repository without a tag "
         "(put '1.0' in kompi:imageTag) (from image.repository)"),
        ({"image": {"repository": "r.example.com/train", "tag": "v 1"}},
         "error: invalid config kompi:imageTag = \"v 1\": expected an image tag (letters, digits, '_', '.', '-'; "
         "at most 128), optionally followed by @sha256:<64 hex> (from image.tag)"),
        ({"gitSyncImage": {"repository": "registry.k8s.io/Git-Sync", "tag": "v4.4.2"}},
         "error: invalid config kompi:gitSyncImage = \"registry.k8s.io/Git-Sync:v4.4.2\": expected an image "
         "reference in lower case (only the registry host may have capitals), such as "
         "registry.example.com/ml/kompi (from gitSyncImage)"),
        ({"mpiWorkers": {"resources": {"limits": {"cpu": "two"}}}},
         "error: invalid config kompi:workerPod.resources = {\"limits\": {\"cpu\": \"two\"}}: expected limits.cpu "
         "to be a Kubernetes quantity such as 500m, 2 or 4Gi, not \"two\" (from mpiWorkers.resources)"),
    ],
)  # fmt: skip
def test_a_value_kompi_refuses_fails_with_its_one_line(kompi: Kompi, project: Path, values, line: str) -> None:
    run, _ = import_values(kompi, project, values)
    assert run.code == 2
    assert run.err_lines[-1] == line
    assert all(previous.startswith("warning: ") for previous in run.err_lines[:-1])
    assert not (project / "Pulumi.imported.yaml").exists()


def test_a_read_write_once_claim_on_several_workers_is_refused(kompi: Kompi, project: Path) -> None:
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "training-data"}}
    values = {"mpiWorkers": {"num": 3, "volumes": [claim], "volumeMounts": [{"name": "data", "mountPath": "/data"}]}}
    run, _ = import_values(kompi, project, values)
    assert run.code == 2
    assert run.err_lines[-1].startswith(
        'error: invalid config kompi:workerPod.volumes[0].persistentVolumeClaim.claimName = "training-data": '
    )
    assert run.err_lines[-1].endswith("(from mpiWorkers.volumes)")


def test_the_cluster_name_comes_from_release_and_is_checked(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, {}, "--release", "My_Cluster")
    assert run.code == 2
    assert run.err_lines[-1].startswith('error: invalid config kompi:clusterName = "My_Cluster": expected a DNS-1123')
    assert "(from --release" in run.err_lines[-1]
    run, _ = import_values(kompi, project, {}, "--release", "mpi")
    assert run.code == 0
    assert stack_config(project / "Pulumi.imported.yaml")["kompi:clusterName"] == "mpi"


def test_the_cluster_name_defaults_to_the_stack_name(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, {})
    assert run.code == 0, run.err
    assert stack_config(project / "Pulumi.imported.yaml")["kompi:clusterName"] == "imported"


def test_an_existing_stack_file_is_kept_unless_force(kompi: Kompi, project: Path) -> None:
    stack_file = project / "Pulumi.imported.yaml"
    stack_file.write_text("config:\n  kompi:workers: 1\n")
    run, _ = import_values(kompi, project, {"mpiWorkers": {"num": 3}})
    assert run.code == 2
    assert run.err_lines == [f"error: {stack_file}: exists already; pass --force to overwrite it"]
    assert stack_file.read_text() == "config:\n  kompi:workers: 1\n"
    run, _ = import_values(kompi, project, {"mpiWorkers": {"num": 3}}, "--force")
    assert run.code == 0, run.err
    assert stack_config(stack_file)["kompi:workers"] == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [("image: [unclosed\n", "not valid YAML"), ("- a\n- b\n", "expected a mapping of values at the top level")],
)
def test_a_bad_values_file_fails_with_one_line(kompi: Kompi, project: Path, text: str, message: str) -> None:
    path = project / "values.yaml"
    path.write_text(text)
    run = kompi("import-values", path, "--stack", "imported", "--dir", project)
    assert run.code == 2
    assert run.err_lines == [run.err_lines[0]] and message in run.err_lines[0]


def test_a_missing_values_file_or_a_bad_stack_name_fails_with_one_line(kompi: Kompi, project: Path) -> None:
    run = kompi("import-values", project / "nope.yaml", "--stack", "imported", "--dir", project)
    missing = project / "nope.yaml"
    assert run.code == 2
    assert run.err_lines == [f"error: {missing}: cannot read it: No such file or directory (looked for {missing})"]
    run = kompi("import-values", FIXTURES / "non-root.yaml", "--stack", "../elsewhere", "--dir", project)
    assert run.code == 2 and run.err_lines == ["error: --stack: '../elsewhere' is not a stack name " + (
        "(letters, digits, '-', '_', '.')")]  # fmt: skip


def test_a_missing_project_dir_says_where_it_looked(kompi: Kompi, project: Path) -> None:
    run = kompi("import-values", FIXTURES / "non-root.yaml", "--stack", "imported", "--dir", project / "nope")
    assert run.code == 2
    assert run.err_lines == [f"error: --dir: no directory {project / 'nope'}: pass kompi's project directory"]


def test_a_release_in_a_namespace_the_cluster_owns_does_not_create_it(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, {}, "--namespace", "default")
    assert run.code == 0, run.err
    config = stack_config(project / "Pulumi.imported.yaml")
    assert config["kompi:namespace"] == "default" and config["kompi:createNamespace"] is False
    assert run.warnings_for("--namespace")
    assert not [manifest for manifest in render(kompi, project, "imported") if manifest["kind"] == "Namespace"]


def test_the_hints_print_the_command_that_works_from_the_shell(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, {})
    assert run.out.endswith(f"check it offline: bin/kompi render --stack imported --dir {project}\n")
    text = (project / "Pulumi.imported.yaml").read_text()
    assert "python -m" not in run.out + run.err + text
    assert "# Check it offline: bin/kompi render --stack imported\n" in text


def test_the_ssh_key_is_not_imported_and_the_command_says_so_once(kompi: Kompi, project: Path) -> None:
    run = kompi("import-values", FIXTURES / "ssh-key.yaml", "--stack", "imported", "--dir", project)
    assert run.code == 0, run.err
    (line,) = [line for line in run.err_lines if "sshKey" in line]
    assert line.startswith("warning: sshKey: not imported: kompi makes the cluster's SSH keys itself")
    assert "FAKE" not in (project / "Pulumi.imported.yaml").read_text()


CHANGED_MEANING = {
    "image": {"repository": "everpeace/kube-openmpi", "tag": "0.7.0"},
    "kubectlImage": {"repository": "everpeace/kubectl", "tag": "1.9.2"},
    "gitSyncImage": {"repository": "k8s.gcr.io/git-sync", "tag": "v2.0.6"},
    "networkPolicy": {"enabled": True},
    "sshGateway": {"enabled": True, "nodePort": 30220},
    "nodeSelector": {"pool": "cpu"},
    "mpiMaster": {
        "autoUpdateHostfile": {"enabled": True, "updateEvery": 15},
        "nodeSelector": {"zone": "a"},
    },
    "mpiWorkers": {
        "num": 2,
        "customScheduling": {"enabled": True, "schedulerName": "kube-batchd", "podDisruptionBudget": {"enabled": True}},
    },
    "appCodesToSync": [
        {"name": "app", "gitRepo": "git@git.example.com:a/app.git", "gitBranch": "main", "fetchWaitSecond": "30",
         "mountPath": "/app", "subPath": "app/src", "gitSecretName": "deploy-key"},
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    "path",
    [
        "image.repository",
        "kubectlImage",
        "gitSyncImage",
        "networkPolicy.enabled",
        "sshGateway",
        "mpiMaster.autoUpdateHostfile",
        "mpiMaster.nodeSelector",
        "mpiMaster.securityContext",
        "mpiWorkers.securityContext",
        "mpiWorkers.customScheduling",
        "mpiWorkers.customScheduling.podDisruptionBudget",
        "appCodesToSync[0].subPath",
        "appCodesToSync[0].fetchWaitSecond",
        "appCodesToSync[0].gitSecretName",
    ],
)
def test_each_key_whose_meaning_changed_gets_one_warning_line(kompi: Kompi, project: Path, path: str) -> None:
    run, _ = import_values(kompi, project, CHANGED_MEANING)
    assert run.code == 0, run.err
    assert all(line.startswith("warning: ") for line in run.err_lines)
    assert len(run.warnings_for(path)) == 1, run.err
    # The stack file repeats the warnings as comments.
    assert f"#   {path}: " in (project / "Pulumi.imported.yaml").read_text()


def test_the_master_node_selector_now_takes_effect(kompi: Kompi, project: Path) -> None:
    run, _ = import_values(kompi, project, CHANGED_MEANING)
    assert "now takes effect" in run.warnings_for("mpiMaster.nodeSelector")[0]
    objects = render(kompi, project, "imported")
    master = next(m for m in objects if m["metadata"]["name"] == "imported-master")
    assert master["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "cpu", "zone": "a"}


def test_the_real_command_line_imports_and_renders(tmp_path: Path) -> None:
    project = tmp_path
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    command = [sys.executable, "-m", "kompi_components"]
    values = FIXTURES / "chainermn-gpu.yaml"
    imported = subprocess.run(
        [*command, "import-values", values, "--stack", "gpu", "--dir", project],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    rendered = subprocess.run(
        [*command, "render", "--stack", "gpu"], cwd=project, capture_output=True, text=True, check=False,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    (workers,) = [m for m in yaml.safe_load_all(rendered.stdout) if m and m["metadata"]["name"].endswith("-worker")]
    (mpi,) = [c for c in workers["spec"]["template"]["spec"]["containers"] if c["name"] == "mpi"]
    assert mpi["resources"]["limits"]["nvidia.com/gpu"] == 1
    bad = project / "bad.yaml"
    bad.write_text("mpiWorkers:\n  nmu: 2\n")
    failed = subprocess.run(
        [*command, "import-values", bad, "--stack", "bad", "--dir", project],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: mpiWorkers.nmu: unknown kube-openmpi key")
    assert "Traceback" not in failed.stderr and failed.stderr.count("\n") == 1
