"""Names derived from the longest cluster name still fit Kubernetes' limits, and labels are complete."""

from __future__ import annotations

import re

from kompi_components.config.schema import CLUSTER_NAME_MAX
from kompi_components.render import render_objects
from tests.stacks import EVERY_FEATURE, as_config

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Kinds whose names must be DNS labels (hostnames, label values); the others may be subdomains.
LABEL_NAMED_KINDS = {"Namespace", "Service", "StatefulSet", "Job"}
RECOMMENDED = {"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"}
# The StatefulSet controller labels each pod "<name>-<10-character hash>" (controller-revision-hash).
STATEFULSET_NAME_MAX = 63 - 11
LONGEST = as_config(
    EVERY_FEATURE
    | {"clusterName": "c" * CLUSTER_NAME_MAX, "workers": 4096, "oneShot": {"enabled": False}}
    | {"dataVolumes": [{"name": "d" * 40, "size": "1Gi", "mountPath": "/d"}]}
    | {"dataPreparation": {"command": ["true"]}}
)


def _objects() -> list[dict]:
    return render_objects(LONGEST)


def test_every_object_name_fits_its_kind() -> None:
    for manifest in _objects():
        name = manifest["metadata"]["name"]
        pattern = DNS_LABEL if manifest["kind"] in LABEL_NAMED_KINDS else DNS_SUBDOMAIN
        assert pattern.match(name), f"{manifest['kind']}/{name}"


def test_statefulset_pods_and_their_hostnames_fit() -> None:
    for manifest in _objects():
        if manifest["kind"] != "StatefulSet":
            continue
        name = manifest["metadata"]["name"]
        assert len(name) <= STATEFULSET_NAME_MAX, name
        last_pod = f"{name}-{max(manifest['spec']['replicas'] - 1, 0)}"
        assert DNS_LABEL.match(last_pod), last_pod


def test_every_object_and_pod_carries_the_recommended_labels() -> None:
    for manifest in _objects():
        labels = manifest["metadata"]["labels"]
        assert set(labels) >= RECOMMENDED, manifest["metadata"]["name"]
        assert all(len(value) <= 63 for value in labels.values())
        template = (manifest.get("spec") or {}).get("template")
        if template:
            assert set(template["metadata"]["labels"]) >= RECOMMENDED
