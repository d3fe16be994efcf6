"""Bad input fails before anything is created, with one line naming key, value and expectation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kompi_components.config import load_config
from kompi_components.config.namespaces import kompi_config
from tests.config.refusal import assert_program_refuses_before_registering, assert_refused_with_one_line, bare
from tests.stacks import REPO

CASES: dict[str, tuple[dict[str, object], str]] = {
    "typo-of-workers": ({"worker": 3}, 'kompi:worker = "3": expected a known key (did you mean kompi:workers'),
    "negative-workers": ({"workers": -1}, "kompi:workers = -1: expected a number >= 0"),
    "workers-not-int": ({"workers": "many"}, 'kompi:workers = "many": expected an integer'),
    "workers-float": ({"workers": 2.5}, "kompi:workers = 2.5: expected an integer"),
    "negative-gpus": ({"gpusPerWorker": -2}, "kompi:gpusPerWorker = -2: expected a number >= 0"),
    "cluster-name-not-dns": ({"clusterName": "My_Cluster"}, 'kompi:clusterName = "My_Cluster": expected a DNS-1123'),
    "cluster-name-too-long": ({"clusterName": "a" * 41}, "at most 40 characters"),
    "namespace-not-dns": ({"namespace": "Team.ML"}, 'kompi:namespace = "Team.ML": expected a DNS-1123 label'),
    "pull-policy": ({"imagePullPolicy": "Sometimes"}, "expected one of 'Always', 'IfNotPresent' or 'Never'"),
    "bool-as-word": ({"createNamespace": "yes"}, 'kompi:createNamespace = "yes": expected true or false'),
    "nested-typo": ({"networkPolicy": {"enabeld": False}}, "kompi:networkPolicy.enabeld = false: expected no such key"),
    "git-without-repo": (
        {"appCode": [{"name": "app", "mountPath": "/repo"}]},
        "kompi:appCode[0].repo = <missing>: expected a value (this key is required)",
    ),
    "git-relative-mount": (
        {"appCode": [{"name": "app", "repo": "https://x/y.git", "mountPath": "repo"}]},
        'kompi:appCode[0].mountPath = "repo": expected an absolute path',
    ),
    "git-subpath-escape": (
        {"appCode": [{"name": "app", "repo": "https://x/y.git", "mountPath": "/r", "subPath": "../etc"}]},
        "expected a relative path without '..'",
    ),
    "shared-rwo-claim": (
        {"sharedClaims": [{"claimName": "data", "accessMode": "ReadWriteOnce", "mountPath": "/data"}]},
        "kompi:sharedClaims[0].accessMode = \"ReadWriteOnce\": expected ReadWriteMany or ReadOnlyMany: claim 'data' "
        "is mounted by 3 pods; a ReadWriteOnce claim attaches to one node only",
    ),
    "raw-claim-on-master-and-workers": (
        {
            "workers": 1,
            "masterPod": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
            "workerPod": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
        },
        'kompi:workerPod.volumes[0].persistentVolumeClaim.claimName = "data": expected a claim used by one pod only',
    ),
    "raw-claim-on-many-workers": (
        {"workerPod": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}},
        "(it would be mounted by 2 workers)",
    ),
    "mount-of-unknown-volume": (
        {"workerPod": {"volumeMounts": [{"name": "nope", "mountPath": "/x"}]}},
        'kompi:workerPod.volumeMounts[0].name = "nope": expected the name of a volume in kompi:workerPod.volumes',
    ),
    "reserved-volume-name": (
        {"masterPod": {"volumes": [{"name": "kompi-ssh", "emptyDir": {}}]}},
        "expected a name not starting with 'kompi-' (reserved)",
    ),
    "gpu-limit-conflict": (
        {"gpusPerWorker": 2, "workerPod": {"resources": {"limits": {"nvidia.com/gpu": 1}}}},
        "kompi:workerPod.resources.limits.nvidia.com/gpu = 1: expected no GPU entry here, or the same as "
        "kompi:gpusPerWorker (2): set the GPUs with kompi:gpusPerWorker",
    ),
    "gang-mode": ({"gangScheduling": {"enabled": True, "mode": "kube-batch"}}, "expected one of 'pdb', 'volcano'"),
    "bad-cidr": ({"networkPolicy": {"sshAllowFrom": ["everyone"]}}, "expected a CIDR block"),
    "bad-quantity": ({"shmSize": "lots"}, 'kompi:shmSize = "lots": expected a Kubernetes quantity'),
    "duplicate-mount-path": (
        {
            "appCode": [{"name": "app", "repo": "https://x/y.git", "mountPath": "/data"}],
            "sharedClaims": [{"claimName": "d", "accessMode": "ReadWriteMany", "mountPath": "/data"}],
        },
        'kompi:sharedClaims[0].mountPath = "/data": expected a mount path not used already',
    ),
    "resources-limits-not-a-map": (
        {"workerPod": {"resources": {"limits": "2Gi"}}},
        'kompi:workerPod.resources = {"limits": "2Gi"}: expected an object with requests/limits maps',
    ),
    "resources-typo": ({"masterPod": {"resources": {"limit": {"cpu": 1}}}}, "kompi:masterPod.resources = "),
    "master-compute-in-one-shot": (
        {"masterPod": {"compute": True}, "oneShot": {"enabled": True, "command": "mpiexec hostname"}},
        "kompi:masterPod.compute = true: expected false when kompi:oneShot is enabled",
    ),
    "one-shot-negative-restarts": (
        {"oneShot": {"enabled": True, "command": "mpiexec hostname", "restarts": -1}},
        "kompi:oneShot.restarts = -1: expected a number >= 0",
    ),
    "one-shot-too-many-restarts": (
        {"oneShot": {"enabled": True, "command": "mpiexec hostname", "restarts": 101}},
        "kompi:oneShot.restarts = 101: expected a number <= 100",
    ),
    "one-shot-restarts-not-int": (
        {"oneShot": {"enabled": True, "command": "mpiexec hostname", "restarts": "forever"}},
        'kompi:oneShot.restarts = "forever": expected an integer',
    ),
    "zero-uid-without-root-opt-in": ({"runAsUser": 0}, "kompi:runAsUser = 0: expected a number >= 1"),
    # Image references the kubelet would refuse (InvalidImageName) once the pods exist.
    "image-with-tag": (
        {"image": "registry.example.com/kompi:1.0"},
        'kompi:image = "registry.example.com/kompi:1.0": expected a repository without a tag '
        "(put '1.0' in kompi:imageTag)",
    ),
    "image-with-space": ({"image": "my kompi"}, 'kompi:image = "my kompi": expected an image repository such as'),
    "image-upper-case": (
        {"image": "registry.example.com/ML/Kompi"},
        'kompi:image = "registry.example.com/ML/Kompi": expected an image repository in lower case',
    ),
    "image-upper-case-org": ({"image": "MyOrg/kompi"}, "expected an image repository in lower case"),
    "image-with-digest": ({"image": "kompi@sha256:" + "a" * 64}, "expected a repository without a digest"),
    "image-tag-empty": ({"imageTag": ""}, 'kompi:imageTag = "": expected an image tag'),
    "image-tag-with-space": ({"imageTag": "4.1 bookworm"}, 'kompi:imageTag = "4.1 bookworm": expected an image tag'),
    "image-tag-bad-digest": (
        {"imageTag": "4.1.4@sha256:abc"},
        'kompi:imageTag = "4.1.4@sha256:abc": expected a digest such as sha256:<64 lower-case hex digits>',
    ),
    "git-sync-image-bad-tag": (
        {"gitSyncImage": "registry.k8s.io/git-sync/git-sync:"},
        'kompi:gitSyncImage = "registry.k8s.io/git-sync/git-sync:": expected an image reference such as '
        "registry.example.com/ml/kompi:TAG (bad tag '')",
    ),
    "git-sync-image-upper-case": ({"gitSyncImage": "Git-Sync:v4"}, "expected an image reference in lower case"),
    "preparation-image-bad-digest": (
        {
            "dataVolumes": [{"name": "d", "size": "1Gi", "mountPath": "/d"}],
            "dataPreparation": {"image": "busybox@sha256:zz", "command": ["true"]},
        },
        'kompi:dataPreparation.image = "busybox@sha256:zz": expected a digest',
    ),
    # Quantities and CIDRs the API server would refuse half-way through `pulumi up`.
    "cpu-as-word": (
        {"workerPod": {"resources": {"requests": {"cpu": "two"}}}},
        'kompi:workerPod.resources = {"requests": {"cpu": "two"}}: expected requests.cpu to be a Kubernetes '
        'quantity such as 500m, 2 or 4Gi, not "two"',
    ),
    "negative-memory": (
        {"masterPod": {"resources": {"limits": {"memory": "-1Gi"}}}},
        'expected limits.memory to be a Kubernetes quantity such as 500m, 2 or 4Gi, not "-1Gi"',
    ),
    "preparation-bad-quantity": (
        {
            "dataVolumes": [{"name": "d", "size": "1Gi", "mountPath": "/d"}],
            "dataPreparation": {"command": ["true"], "resources": {"limits": {"memory": "2 GB"}}},
        },
        "kompi:dataPreparation.resources = ",
    ),
    "cidr-prefix-too-long": (
        {"networkPolicy": {"sshAllowFrom": ["10.0.0.0/33"]}},
        'kompi:networkPolicy.sshAllowFrom[0] = "10.0.0.0/33": expected a CIDR block such as 10.0.0.0/8',
    ),
    "cidr-bad-address": (
        {"networkPolicy": {"sshAllowFrom": ["999.1.1.1/8"]}},
        'kompi:networkPolicy.sshAllowFrom[0] = "999.1.1.1/8": expected a CIDR block',
    ),
    # GPUs have one source of truth, kompi:gpusPerWorker (the limit and the hostfile's slots).
    "gpus-only-in-worker-limits": (
        {"workerPod": {"resources": {"limits": {"nvidia.com/gpu": 4}}}},
        "kompi:workerPod.resources.limits.nvidia.com/gpu = 4: expected no GPU entry here, or the same as "
        "kompi:gpusPerWorker (0): set the GPUs with kompi:gpusPerWorker",
    ),
    "gpus-in-worker-requests": (
        {"gpusPerWorker": 8, "workerPod": {"resources": {"requests": {"nvidia.com/gpu": "4"}}}},
        'kompi:workerPod.resources.requests.nvidia.com/gpu = "4": expected no GPU entry here',
    ),
    "compute-master-with-other-gpus": (
        {"gpusPerWorker": 8, "masterPod": {"compute": True, "resources": {"limits": {"nvidia.com/gpu": 1}}}},
        "kompi:masterPod.resources.limits.nvidia.com/gpu = 1: expected no GPU entry here, or 8: with "
        "kompi:masterPod.compute the master gets kompi:gpusPerWorker (8) GPUs",
    ),
    # Namespaces the cluster owns: kompi would take them over and delete them on destroy.
    **{
        f"system-namespace-{namespace}": (
            {"namespace": namespace},
            f'kompi:namespace = "{namespace}": expected a namespace kompi may own while kompi:createNamespace is '
            f"true (kompi would take it over and delete it on destroy); to use '{namespace}', set "
            "kompi:createNamespace: false",
        )
        for namespace in ("default", "kube-system", "kube-public", "kube-node-lease")
    },
    # Mount paths that collide with kompi's own mounts or with each other.
    "mount-on-dev-shm": (
        {
            "workerPod": {
                "volumes": [{"name": "s", "emptyDir": {}}],
                "volumeMounts": [{"name": "s", "mountPath": "/dev/shm"}],
            }
        },
        'kompi:workerPod.volumeMounts[0].mountPath = "/dev/shm": expected a mount path outside /dev/shm: kompi '
        "mounts the memory-backed /dev/shm of kompi:shmSize (null to mount your own) there",
    ),
    "mount-on-ssh-keys": (
        {"appCode": [{"name": "app", "repo": "https://x/y.git", "mountPath": "/etc/kompi/ssh"}]},
        'kompi:appCode[0].mountPath = "/etc/kompi/ssh": expected a mount path outside /etc/kompi/ssh: kompi mounts '
        "the cluster's SSH keys there",
    ),
    "mount-inside-hostfile-dir": (
        {"sharedClaims": [{"claimName": "d", "accessMode": "ReadWriteMany", "mountPath": "/kompi/generated/x/"}]},
        'kompi:sharedClaims[0].mountPath = "/kompi/generated/x/": expected a mount path outside /kompi/generated: '
        "kompi mounts the hostfile there",
    ),
    "user-mounts-collide": (
        {
            "masterPod": {
                "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
                "volumeMounts": [{"name": "a", "mountPath": "/scratch"}, {"name": "b", "mountPath": "/scratch/"}],
            }
        },
        'kompi:masterPod.volumeMounts[1].mountPath = "/scratch/": expected a mount path not used already '
        "(kompi:masterPod.volumeMounts[0].mountPath uses it)",
    ),
    "user-mount-on-data-volume": (
        {
            "dataVolumes": [{"name": "d", "size": "1Gi", "mountPath": "/data"}],
            "workerPod": {
                "volumes": [{"name": "a", "emptyDir": {}}],
                "volumeMounts": [{"name": "a", "mountPath": "/data"}],
            },
        },
        "expected a mount path not used already (kompi:dataVolumes[0].mountPath uses it)",
    ),
    "worker-volume-on-claim": (
        {
            "workerVolume": {"size": "1Gi", "mountPath": "/data"},
            "sharedClaims": [{"claimName": "d", "accessMode": "ReadWriteMany", "mountPath": "/data"}],
        },
        'kompi:workerVolume.mountPath = "/data": expected a mount path not used already',
    ),
    "relative-user-mount": (
        {"workerPod": {"volumes": [{"name": "a", "emptyDir": {}}], "volumeMounts": [{"name": "a", "mountPath": "x"}]}},
        'kompi:workerPod.volumeMounts[0].mountPath = "x": expected an absolute path',
    ),
    # Names that would exceed 63 characters, or collide, once kompi derives its own from them.
    "app-name-too-long-for-its-volume": (
        {"appCode": [{"name": "a" * 60, "repo": "https://x/y.git", "mountPath": "/repo"}]},
        "at most 52 characters: kompi names its volume kompi-code-<name>",
    ),
    "duplicate-user-volume": (
        {"workerPod": {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]}},
        'kompi:workerPod.volumes[1].name = "a": expected a volume name used once',
    ),
    "user-volume-named-like-worker-volume": (
        {
            "workerVolume": {"size": "1Gi", "mountPath": "/s"},
            "workerPod": {"volumes": [{"name": "scratch", "emptyDir": {}}]},
        },
        'kompi:workerPod.volumes[0].name = "scratch": expected a volume name used once '
        "(kompi:workerVolume.name uses it)",
    ),
    "user-volume-name-not-a-label": (
        {"masterPod": {"volumes": [{"name": "My_Data", "emptyDir": {}}]}},
        'kompi:masterPod.volumes[0].name = "My_Data": expected a volume name that is a DNS-1123 label',
    ),
    "worker-volume-reserved-name": (
        {"workerVolume": {"name": "kompi-ssh", "size": "1Gi", "mountPath": "/s"}},
        "kompi:workerVolume.name = \"kompi-ssh\": expected a name not starting with 'kompi-' (reserved)",
    ),
    # Keys outside the kompi: namespace that look like kompi keys would otherwise be ignored silently.
    "namespace-typo": (
        {"kompy:workers": 3},
        'invalid config kompy:workers = "3": expected kompi:workers (kompi reads only the kompi: namespace)',
    ),
    "namespace-capitalised": ({"Kompi:gpusPerWorker": 8}, "expected kompi:gpusPerWorker"),
    "bare-key": (
        {bare("workers"): 3},
        'invalid config workers = "3": expected kompi:workers (stack config keys are namespace:name)',
    ),
    "bare-key-typo": ({bare("gpuPerWorker"): 3}, "expected kompi:gpusPerWorker (stack config keys"),
    "bare-unknown-key": ({bare("color"): "red"}, "expected a key with its namespace, such as kompi:workers"),
    "queue-not-a-label": (
        {"queue": "Team_A"},
        "kompi:queue = \"Team_A\": expected a DNS-1123 label (lower-case letters, digits, '-'; at most 63 characters: "
        "Kueue reads it from a pod label)",
    ),
    "priority-without-queue": (
        {"queuePriorityClass": "urgent"},
        'kompi:queuePriorityClass = "urgent": expected unset without kompi:queue',
    ),
    "cidr-without-prefix": ({"networkPolicy": {"sshAllowFrom": ["10.0.0.1"]}}, "(with its /prefix length)"),
}


@pytest.mark.parametrize(("values", "message"), CASES.values(), ids=CASES.keys())
def test_bad_value_is_one_line_naming_key_value_and_expectation(values: dict[str, object], message: str) -> None:
    assert_refused_with_one_line(values, message)


@pytest.mark.parametrize(("values", "message"), CASES.values(), ids=CASES.keys())
def test_program_refuses_bad_value_before_registering_anything(values: dict[str, object], message: str) -> None:
    assert_program_refuses_before_registering(values, message)


def test_provider_keys_pass() -> None:
    config = {"kubernetes:context": "kind", "pulumi:tags": "{}", "kubernetes:namespace": "ml", "kompi:workers": "3"}
    assert load_config(kompi_config(config)).workers == 3


def test_values_straight_from_yaml_and_from_pulumi_strings_agree() -> None:
    as_yaml = load_config({"kompi:workers": 3, "kompi:networkPolicy": {"enabled": False}})
    as_pulumi = load_config({"kompi:workers": "3", "kompi:networkPolicy": json.dumps({"enabled": False})})
    assert as_yaml == as_pulumi


def _render(tmp_path_factory: pytest.TempPathFactory, stack_yaml: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    project = tmp_path_factory.mktemp("project")
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    (project / "Pulumi.bad.yaml").write_text(stack_yaml)
    result = subprocess.run(
        [sys.executable, "-m", "kompi_components", "render", "--stack", "bad", "--dir", str(project)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    return result, project / "Pulumi.bad.yaml"


STACK_FILE_CASES: dict[str, tuple[str, str]] = {
    "typo": ("config:\n  kompi:worker: 3\n", 'error: invalid config kompi:worker = "3": expected a known key'),
    "negative": ("config:\n  kompi:workers: -4\n", "error: invalid config kompi:workers = -4: expected a number >= 0"),
    "broken-yaml": (
        "config: [\n",
        "error: {file}:2:1: not valid YAML: expected the node content, but found '<stream end>'",
    ),
    "bad-indent": (
        "config:\n  kompi:workers: 2\n kompi:gpusPerWorker: 1\n",
        "error: {file}:3:2: not valid YAML: expected <block end>, but found '<block mapping start>'",
    ),
    "empty-file": ("", "error: {file}:1:1: empty file: expected a mapping with a config: mapping of kompi:* keys"),
    "only-comments": ("# nothing yet\n", "error: {file}:1:1: empty file"),
    "top-level-list": ("- kompi:workers: 2\n", "error: {file}:1:1: expected a mapping with a config: mapping"),
    "config-is-a-list": (
        "config:\n  - kompi:workers: 2\n",
        "error: {file}:2:3: config: expected a mapping of kompi:* keys, not a list",
    ),
    "config-is-text": (
        "config: workers=2\n",
        "error: {file}:1:9: config: expected a mapping of kompi:* keys, not a scalar",
    ),
    "number-key": ("config:\n  1: 2\n", "error: {file}:2:3: expected a key (text), not 1"),
    "key-twice": ("config:\n  kompi:workers: 2\n  kompi:workers: 3\n", "error: {file}:3:3: kompi:workers is set twice"),
    "empty-image-tag": (
        "config:\n  kompi:imageTag:\n",
        "error: invalid config kompi:imageTag = null: expected a value",
    ),
    "namespace-typo": (
        "config:\n  kompy:workers: 3\n",
        "error: invalid config kompy:workers = 3: expected kompi:workers",
    ),
    "bare-key": ("config:\n  workers: 3\n", "error: invalid config workers = 3: expected kompi:workers"),
}


@pytest.mark.parametrize(("stack_yaml", "line"), STACK_FILE_CASES.values(), ids=STACK_FILE_CASES.keys())
def test_render_exits_2_with_one_line_and_no_traceback(
    tmp_path_factory: pytest.TempPathFactory, stack_yaml: str, line: str
) -> None:
    result, stack_file = _render(tmp_path_factory, stack_yaml)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(line.format(file=stack_file))
    assert "Traceback" not in result.stderr


def test_provider_keys_in_a_stack_file_pass(tmp_path_factory: pytest.TempPathFactory) -> None:
    result, _ = _render(
        tmp_path_factory, "config:\n  kubernetes:context: kind\n  pulumi:disable-default-providers: []\n"
    )
    assert result.returncode == 0, result.stderr


def test_missing_stack_file_lists_the_stacks_that_exist() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kompi_components", "render", "--stack", "nope"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 2
    assert (
        result.stderr == f"error: no stack file Pulumi.nope.yaml in {REPO} (the stacks there: data, dev, gpu, train)\n"
    )


def test_missing_project_dir_says_where_it_looked(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kompi_components", "render", "--stack", "dev", "--dir", "nowhere"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert result.returncode == 2
    assert (
        result.stderr == f"error: no Pulumi.yaml in {tmp_path / 'nowhere'}: --dir must be kompi's project directory\n"
    )
