"""The key mapping itself (no CLI): each kube-openmpi key is imported, reported or refused."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kompi_components.config import load_config
from kompi_components.migrate.errors import ValuesError
from kompi_components.migrate.keys import KUBE_OPENMPI_KEYS, leaf_paths
from kompi_components.migrate.translate import translate
from kompi_components.migrate.translation import Translation
from kompi_components.migrate.values_file import merge
from kompi_components.stack_files import as_pulumi_string

# A value for every key the chart reads (non-default where that changes what is imported).
EVERY_KEY: dict[str, Any] = {
    "image": {"repository": "r.example.com/app", "tag": "1", "pullPolicy": "Always", "pullSecrets": [{"name": "rc"}]},
    "kubectlImage": {"repository": "everpeace/kubectl", "tag": "1.9.2", "pullPolicy": "IfNotPresent"},
    "gitSyncImage": {"repository": "registry.k8s.io/git-sync/git-sync", "tag": "v4.2.1", "pullPolicy": "Always"},
    "networkPolicy": {"enabled": True},
    "sshGateway": {"enabled": True, "nodePort": 30220},
    "sshKey": {"id_rsa": "PRIVATE", "id_rsa_pub": "PUBLIC"},
    "nodeSelector": {"pool": "cpu"},
    "mpiMaster": {
        "autoUpdateHostfile": {"enabled": True, "updateEvery": 15},
        "securityContext": {"runAsUser": 1000, "fsGroup": 1000},
        "oneShot": {"enabled": True, "autoScaleDownWorkers": True, "command": "mpiexec hostname"},
        "customScheduling": {"enabled": True, "schedulerName": "kube-batchd"},
        "resources": {"requests": {"cpu": "1"}},
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {}},
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
    },
    "mpiWorkers": {
        "num": 3,
        "securityContext": {"runAsUser": 1000, "fsGroup": 1000},
        "customScheduling": {"enabled": True, "schedulerName": "kube-batchd", "podDisruptionBudget": {"enabled": True}},
        "resources": {"limits": {"nvidia.com/gpu": 2, "memory": "4Gi"}},
        "podManagementPolicy": "Parallel",
        "nodeSelector": {"gpu": "yes"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "affinity": {"podAntiAffinity": {}},
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
    },
    "appCodesToSync": [
        {"name": "app", "gitRepo": "git@h:o/app.git", "gitBranch": "dev", "fetchWaitSecond": "5",
         "mountPath": "/app", "subPath": "app/src", "gitSecretName": "key"},
    ],
}  # fmt: skip


def accounted_for(result: Translation) -> set[str]:
    """Every kube-openmpi path the translation imported, warned about or accepted as a no-op."""
    named = list(result.origins.values()) + [notice.path for notice in result.warnings] + list(result.accepted)
    return {token.replace("[]", "[0]") for text in named for token in re.findall(r"[A-Za-z][\w./\[\]-]*", text)}


def translated(values: dict[str, Any], release: str = "rel") -> Translation:
    result = translate(values, release)
    load_config({key: as_pulumi_string(value) for key, value in result.config.items()})
    return result


def warned(result: Translation, path: str) -> list[str]:
    return [notice.message for notice in result.warnings if notice.path == path]


def value_at(values: Any, path: str) -> Any:
    for part in re.findall(r"[^.\[\]]+", path):
        values = values[int(part)] if part.isdigit() else values[part]
    return values


def test_every_key_the_chart_reads_is_imported_or_reported() -> None:
    for path in leaf_paths(KUBE_OPENMPI_KEYS, list_marker="[0]"):
        assert value_at(EVERY_KEY, path) is not None, f"EVERY_KEY lacks {path}"
    result = translated(EVERY_KEY)
    covered = accounted_for(result)
    for path in leaf_paths(KUBE_OPENMPI_KEYS, list_marker="[0]"):
        ancestors = [path[: match.start()] for match in re.finditer(r"[.\[]", path)]
        assert path in covered or any(a in covered for a in ancestors), f"{path} is neither imported nor reported"


def test_every_key_maps_to_the_documented_kompi_keys() -> None:
    config = translated(EVERY_KEY).config
    assert config["workers"] == 3
    assert config["gpusPerWorker"] == 2
    assert config["workerPod"]["resources"] == {"limits": {"memory": "4Gi"}}
    assert (config["image"], config["imageTag"], config["imagePullPolicy"]) == ("r.example.com/app", "1", "Always")
    assert config["imagePullSecrets"] == ["rc"]
    # a git-sync v4 named in the values keeps git-sync as the fetcher
    assert (config["appCodeFetcher"], config["gitSyncImage"]) == (
        "git-sync",
        "registry.k8s.io/git-sync/git-sync:v4.2.1",
    )
    assert config["networkPolicy"] == {"enabled": True}
    assert config["gangScheduling"] == {"enabled": True, "mode": "pdb", "schedulerName": "kube-batchd"}
    assert (config["runAsUser"], config["runAsGroup"]) == (1000, 1000)
    assert config["masterPod"]["nodeSelector"] == {"pool": "cpu", "zone": "a"}
    assert config["workerPod"]["nodeSelector"] == {"gpu": "yes"}
    for key in ("tolerations", "affinity", "volumes", "volumeMounts"):
        assert config["masterPod"][key] == EVERY_KEY["mpiMaster"][key]
        assert config["workerPod"][key] == EVERY_KEY["mpiWorkers"][key]
    assert config["appCode"] == [
        {"name": "app", "repo": "git@h:o/app.git", "ref": "dev", "mountPath": "/app", "subPath": "src",
         "sshKeySecret": "key", "retryWaitSeconds": 5},
    ]  # fmt: skip
    assert "PRIVATE" not in str(config)
    assert config["oneShot"] == {"enabled": True, "command": "mpiexec hostname", "releaseWorkers": True}


def test_empty_values_give_the_charts_defaults_where_kompi_differs() -> None:
    result = translated({})
    assert result.config == {"clusterName": "rel", "workers": 4}
    assert warned(result, "image")  # kube-openmpi's default image is not a kompi image


@pytest.mark.parametrize("repository", ["everpeace/kube-openmpi", "docker.io/everpeace/kube-openmpi"])
def test_kube_openmpi_images_are_not_imported(repository: str) -> None:
    result = translated({"image": {"repository": repository, "tag": "0.7.0-cuda9"}})
    assert "image" not in result.config and "imageTag" not in result.config
    assert "cannot run kompi's pods" in warned(result, "image.repository")[0]


def test_a_custom_image_without_tag_keeps_the_charts_default_tag() -> None:
    assert translated({"image": {"repository": "r.example.com/app"}}).config["imageTag"] == "0.7.0"


def test_run_as_user_0_is_run_as_root() -> None:
    context = {"runAsUser": 0}
    result = translated({"mpiMaster": {"securityContext": context}, "mpiWorkers": {"securityContext": context}})
    assert result.config["runAsRoot"] is True
    assert "runAsUser" not in result.config


def test_master_and_workers_must_run_as_one_user() -> None:
    values = {"mpiMaster": {"securityContext": {"runAsUser": 0}}, "mpiWorkers": {"securityContext": {"runAsUser": 1}}}
    with pytest.raises(ValuesError, match=r"^mpiMaster\.securityContext: asks for another user"):
        translate(values, "rel")


def test_security_context_details_are_reported() -> None:
    context = {"runAsUser": 1234, "runAsGroup": 5, "fsGroup": 6, "supplementalGroups": [7]}
    result = translated({"mpiWorkers": {"securityContext": context}})
    assert (result.config["runAsUser"], result.config["runAsGroup"]) == (1234, 6)
    assert warned(result, "mpiWorkers.securityContext.runAsUser")  # not the image's uid
    assert warned(result, "mpiWorkers.securityContext.runAsGroup")  # one gid for both
    assert warned(result, "mpiWorkers.securityContext.supplementalGroups")  # dropped
    assert "ran this pod as root" in warned(result, "mpiMaster.securityContext")[0]


def test_only_fs_group_still_warns_that_kube_openmpi_ran_as_root() -> None:
    both = {"securityContext": {"fsGroup": 1000}}
    result = translated({"mpiMaster": both, "mpiWorkers": both})
    assert "sets no runAsUser" in warned(result, "mpiWorkers.securityContext")[0]


def test_gpu_requests_and_the_legacy_resource_name() -> None:
    resources = {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": 2, "cpu": "1"}}
    result = translated({"mpiWorkers": {"resources": resources}})
    assert result.config["gpusPerWorker"] == 2
    assert result.config["workerPod"]["resources"] == {"requests": {"cpu": "1"}}
    legacy = translated({"mpiWorkers": {"resources": {"limits": {"alpha.kubernetes.io/nvidia-gpu": 1}}}})
    assert legacy.config["gpusPerWorker"] == 1 and "workerPod" not in legacy.config
    assert warned(legacy, "mpiWorkers.resources.limits.alpha.kubernetes.io/nvidia-gpu")


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"limits": {"nvidia.com/gpu": "two"}}, "expected a whole number of GPUs"),
        ({"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 2}}, "GPU requests and limits differ"),
    ],
)
def test_bad_gpu_values_are_refused(resources: dict[str, Any], message: str) -> None:
    with pytest.raises(ValuesError, match=message):
        translate({"mpiWorkers": {"resources": resources}}, "rel")


def test_the_top_level_node_selector_still_places_the_master_quietly() -> None:
    result = translated({"nodeSelector": {"pool": "cpu"}})
    assert result.config["masterPod"] == {"nodeSelector": {"pool": "cpu"}}
    assert not warned(result, "nodeSelector") and not warned(result, "mpiMaster.nodeSelector")


def test_conflicting_master_node_selectors_are_refused() -> None:
    with pytest.raises(ValuesError, match=r"^mpiMaster\.nodeSelector\.pool: conflicts with nodeSelector\.pool"):
        translate({"nodeSelector": {"pool": "a"}, "mpiMaster": {"nodeSelector": {"pool": "b"}}}, "rel")


def test_custom_scheduling_variants() -> None:
    master_only = translated({"mpiMaster": {"customScheduling": {"enabled": True, "schedulerName": "s"}}})
    assert master_only.config["gangScheduling"] == {"enabled": True, "mode": "pdb", "schedulerName": "s"}
    assert warned(master_only, "mpiMaster.customScheduling")
    no_name = translated({"mpiWorkers": {"customScheduling": {"enabled": True}}})
    assert "schedulerName" not in no_name.config["gangScheduling"]
    assert warned(no_name, "mpiWorkers.customScheduling.schedulerName")
    assert warned(no_name, "mpiWorkers.customScheduling.podDisruptionBudget.enabled")
    disabled = translated({"mpiWorkers": {"customScheduling": {"enabled": False, "schedulerName": "s"}}})
    assert "gangScheduling" not in disabled.config


def test_git_sync_images_before_v4_are_not_imported() -> None:
    result = translated({"gitSyncImage": {"repository": "k8s.gcr.io/git-sync", "tag": "v3.6.0"}})
    assert "gitSyncImage" not in result.config
    assert "git-sync v2" in warned(result, "gitSyncImage")[0]


@pytest.mark.parametrize(
    ("sub_path", "expected", "message"),
    [
        (None, None, "the repository is now at /app itself"),
        ("app", None, "is now None"),
        ("app/src/", "src", "'app/src' is now 'src'"),
        ("other/src", "other/src", "kept 'other/src'"),
    ],
)
def test_sub_path_becomes_relative_to_the_repository(sub_path: str | None, expected: str | None, message: str) -> None:
    app: dict[str, Any] = {"name": "app", "gitRepo": "https://h/app.git", "mountPath": "/app"}
    if sub_path is not None:
        app["subPath"] = sub_path
    result = translated({"appCodesToSync": [app]})
    assert result.config["appCode"][0].get("subPath") == expected
    assert any(message in notice.message for notice in result.warnings)


def test_git_branch_defaults_to_git_sync_v2s_master_and_fetch_wait_0_is_the_default() -> None:
    app = {"name": "app", "gitRepo": "https://h/app.git", "mountPath": "/app", "subPath": "app", "fetchWaitSecond": 0}
    entry = translated({"appCodesToSync": [app]}).config["appCode"][0]
    assert entry["ref"] == "master" and "retryWaitSeconds" not in entry


def test_a_bad_fetch_wait_is_refused_with_its_path() -> None:
    app = {"name": "app", "gitRepo": "https://h/app.git", "mountPath": "/app", "fetchWaitSecond": "2m"}
    with pytest.raises(ValuesError, match=r"^appCodesToSync\[0\]\.fetchWaitSecond: expected a number of seconds"):
        translate({"appCodesToSync": [app]}, "rel")


def test_ordered_ready_workers_are_reported() -> None:
    assert warned(translated({"mpiWorkers": {"podManagementPolicy": "OrderedReady"}}), "mpiWorkers.podManagementPolicy")


def test_disabled_features_import_quietly() -> None:
    values = {
        "sshGateway": {"enabled": False, "nodePort": 30220},
        "mpiMaster": {"oneShot": {"enabled": False, "command": "x"}},
        "networkPolicy": {"enabled": False},
    }
    result = translated(values)
    paths = {notice.path for notice in result.warnings}
    assert not paths & {"sshGateway", "mpiMaster.oneShot", "networkPolicy.enabled"}
    assert result.config["networkPolicy"] == {"enabled": False}


@pytest.mark.parametrize(
    ("values", "path"), [({"image": "x"}, "image"), ({"appCodesToSync": {"a": 1}}, "appCodesToSync")]
)
def test_sections_of_the_wrong_type_are_refused(values: dict[str, Any], path: str) -> None:
    with pytest.raises(ValuesError, match=rf"^{path}: expected a"):
        translate(values, "rel")


def test_values_files_merge_like_helm() -> None:
    base = {"image": {"repository": "a", "tag": "1"}, "appCodesToSync": [{"name": "x"}], "sshKey": {"id_rsa": "k"}}
    override = {"image": {"tag": "2"}, "appCodesToSync": [{"name": "y"}], "sshKey": None}
    assert merge(base, override) == {"image": {"repository": "a", "tag": "2"}, "appCodesToSync": [{"name": "y"}]}
