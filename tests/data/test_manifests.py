"""The rendered claims and Job: schema-valid, restricted, mounted as configured, named by a spec hash."""

from __future__ import annotations

from typing import Any

import pytest

from kompi_components.manifests.meta import RETAIN_ON_DELETE
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.render import planned_objects, render_objects
from tests.data.configs import DATA, EVERY_FEATURE_WITH_DATA, PREPARATION, SMALL, with_preparation
from tests.k8s_schema import validate
from tests.manifests.pod_security import RULES
from tests.stacks import as_config

Manifest = dict[str, Any]
CONFIGS = {
    "small": SMALL,
    "every-feature": EVERY_FEATURE_WITH_DATA,
    "root": SMALL | {"runAsRoot": True},
    "volumes-only": {"dataVolumes": [{"name": "scratch", "size": "5Gi", "mountPath": "/shared"}]},
}


def _render(values: dict[str, Any]) -> list[Manifest]:
    return render_objects(as_config(values))


def _one(objects: list[Manifest], kind: str, name: str | None = None) -> Manifest:
    (found,) = [m for m in objects if m["kind"] == kind and name in (None, m["metadata"]["name"])]
    return found


def _job(values: dict[str, Any]) -> Manifest:
    return _one(_render(values), "Job")


def _job_name(values: dict[str, Any]) -> str:
    return str(_job(values)["metadata"]["name"])


@pytest.mark.parametrize("values", CONFIGS.values(), ids=CONFIGS.keys())
def test_every_rendered_object_is_schema_valid(values: dict[str, Any]) -> None:
    for manifest in _render(values):
        validate(manifest)


def test_one_claim_per_data_volume_with_its_size_class_and_mode() -> None:
    objects = _render(SMALL)
    train = _one(objects, "PersistentVolumeClaim", "small-data-train")
    assert train["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "nfs",
    }
    assert "annotations" not in train["metadata"]
    keep = _one(objects, "PersistentVolumeClaim", "small-data-keep")
    assert keep["metadata"]["annotations"] == {RETAIN_ON_DELETE: "true"}  # for kubectl users
    # what retains it on `pulumi destroy`: the claim's own Pulumi option
    retained = {o.manifest["metadata"]["name"]: o.options.retain_on_delete for o in planned_objects(as_config(SMALL))}
    assert (retained["small-data-keep"], retained["small-data-train"]) == (True, False)
    assert "storageClassName" not in keep["spec"]


def test_render_lists_claims_and_job_before_the_pods() -> None:
    kinds = [m["kind"] for m in _render(SMALL)]
    assert kinds.index("PersistentVolumeClaim") < kinds.index("Job") < kinds.index("StatefulSet")


@pytest.mark.parametrize("statefulset", ["small-master", "small-worker"])
def test_mpi_pods_mount_prepared_data_read_only_unless_configured(statefulset: str) -> None:
    pod = _one(_render(SMALL), "StatefulSet", statefulset)["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["kompi-data-train"]["persistentVolumeClaim"] == {"claimName": "small-data-train", "readOnly": True}
    assert volumes["kompi-data-keep"]["persistentVolumeClaim"] == {"claimName": "small-data-keep", "readOnly": False}
    (mpi,) = [c for c in pod["containers"] if c["name"] == MPI_CONTAINER]
    mounts = {m["name"]: m for m in mpi["volumeMounts"]}
    assert mounts["kompi-data-train"] == {"name": "kompi-data-train", "mountPath": "/datasets", "readOnly": True}
    assert mounts["kompi-data-keep"] == {"name": "kompi-data-keep", "mountPath": "/keep", "readOnly": False}


def test_without_preparation_pods_mount_the_volume_read_write_and_there_is_no_job() -> None:
    objects = _render(CONFIGS["volumes-only"])
    assert not [m for m in objects if m["kind"] == "Job"]
    worker = _one(objects, "StatefulSet", "kompi-worker")["spec"]["template"]["spec"]
    (mount,) = [m for m in worker["containers"][0]["volumeMounts"] if m["name"] == "kompi-data-scratch"]
    assert mount["readOnly"] is False


def test_job_runs_the_command_once_with_the_data_read_write_and_no_api_token() -> None:
    job = _job(SMALL)
    spec = job["spec"]
    assert spec["backoffLimit"] == 1
    assert spec["activeDeadlineSeconds"] == 600
    assert "ttlSecondsAfterFinished" not in spec
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["automountServiceAccountToken"] is False
    (container,) = pod["containers"]
    assert container["command"] == PREPARATION["command"]
    assert container["image"] == "localhost/kompi:4.1.4-bookworm-0.1.0"
    assert container["env"] == [{"name": "SEED", "value": "7"}, {"name": "SHARDS", "value": "4"}]
    assert container["resources"] == PREPARATION["resources"]
    assert [(m["mountPath"], m["readOnly"]) for m in container["volumeMounts"]] == [
        ("/datasets", False),
        ("/keep", False),
    ]
    assert [v["persistentVolumeClaim"]["readOnly"] for v in pod["volumes"]] == [False, False]


@pytest.mark.parametrize("root", [False, True])
def test_job_has_the_security_contexts_of_the_mpi_pods(root: bool) -> None:
    objects = _render(SMALL | {"runAsRoot": root})
    job_pod = _one(objects, "Job")["spec"]["template"]["spec"]
    mpi_pod = _one(objects, "StatefulSet", "small-worker")["spec"]["template"]["spec"]
    assert job_pod["securityContext"] == mpi_pod["securityContext"]
    assert job_pod["containers"][0]["securityContext"] == mpi_pod["containers"][0]["securityContext"]


@pytest.mark.parametrize("rule", RULES)
def test_job_meets_the_restricted_profile(rule: str) -> None:
    pod = _job(EVERY_FEATURE_WITH_DATA)["spec"]["template"]["spec"]
    assert RULES[rule](pod) == []


def test_job_gets_the_app_code_so_the_script_can_live_in_the_repository() -> None:
    pod = _job(EVERY_FEATURE_WITH_DATA)["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["fetch-app", "fetch-private"]
    assert {"/repo", "/private"} <= {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]


def test_job_pod_stays_out_of_the_cluster_selectors() -> None:
    objects = _render(EVERY_FEATURE_WITH_DATA | {"gangScheduling": {"enabled": True, "mode": "pdb"}})
    labels = _one(objects, "Job")["spec"]["template"]["metadata"]["labels"]
    selectors = [_one(objects, "Service")["spec"]["selector"], _one(objects, "PodDisruptionBudget")["spec"]["selector"]]
    selectors += [p["spec"]["podSelector"] for p in objects if p["kind"] == "NetworkPolicy"]
    for selector in selectors:
        match = selector.get("matchLabels", selector)
        assert not all(labels.get(key) == value for key, value in match.items()), selector


def test_pulumi_waits_past_the_deadline_and_reruns_a_failed_job() -> None:
    annotations = _job(SMALL)["metadata"]["annotations"]
    assert annotations == {"pulumi.com/timeoutSeconds": "660", "pulumi.com/replaceUnready": "true"}


def test_job_name_fits_a_label_value_with_the_longest_cluster_name() -> None:
    name = _job_name(SMALL | {"clusterName": "c" * 40})
    assert name.startswith("c" * 40 + "-prepare-")
    assert len(name) <= 63


# --- rerun semantics: the Job's name is a hash of what shapes the run -------------------------------------

CHANGES_THAT_RERUN = {
    "command": with_preparation(command=["python3", "/repo/prepare.py", "--shards", "8"]),
    "image": with_preparation(image="registry.example.com/prep:2"),
    "kompi-image-tag": SMALL | {"imageTag": "5.0.11-bookworm-0.1.0"},
    "env": with_preparation(env={"SHARDS": "8", "SEED": "7"}),
    "resources": with_preparation(resources={"limits": {"memory": "4Gi"}}),
    "backoff": with_preparation(backoffLimit=3),
    "volume-size": SMALL | {"dataVolumes": [DATA["dataVolumes"][0] | {"size": "20Gi"}, DATA["dataVolumes"][1]]},
    "volume-path": SMALL | {"dataVolumes": [DATA["dataVolumes"][0] | {"mountPath": "/d"}, DATA["dataVolumes"][1]]},
    "volume-added": SMALL | {"dataVolumes": [*DATA["dataVolumes"], {"name": "x", "size": "1Gi", "mountPath": "/x"}]},
    "run-as-user": SMALL | {"runAsUser": 2000},
}
CHANGES_THAT_DO_NOT = {
    "unchanged": SMALL,
    "env-map-reordered": with_preparation(env={"SEED": "7", "SHARDS": "4"}),
    "worker-count": SMALL | {"workers": 5},
    "worker-resources": SMALL | {"workerPod": {"resources": {"limits": {"memory": "8Gi"}}}},
    "read-only-in-pods": SMALL
    | {"dataVolumes": [DATA["dataVolumes"][0] | {"readOnlyInPods": False}, DATA["dataVolumes"][1]]},
    "retain": SMALL | {"dataVolumes": [DATA["dataVolumes"][0], DATA["dataVolumes"][1] | {"retain": False}]},
}


@pytest.mark.parametrize("changed", CHANGES_THAT_RERUN.values(), ids=CHANGES_THAT_RERUN.keys())
def test_a_change_to_what_shapes_the_run_gives_a_new_job(changed: dict[str, Any]) -> None:
    assert _job_name(changed) != _job_name(SMALL)


@pytest.mark.parametrize("changed", CHANGES_THAT_DO_NOT.values(), ids=CHANGES_THAT_DO_NOT.keys())
def test_other_changes_keep_the_same_job_object(changed: dict[str, Any]) -> None:
    assert _job(changed) == _job(SMALL)


def test_image_defaults_to_kompis_image_and_tag() -> None:
    assert (
        _job(with_preparation(image="busybox:1"))["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1"
    )
    tagged = _job(SMALL | {"image": "r.example.com/kompi", "imageTag": "t1"})
    assert tagged["spec"]["template"]["spec"]["containers"][0]["image"] == "r.example.com/kompi:t1"
