"""The local cluster's Kueue (`bin/kompi local up --kueue`): its manager beside the control plane, its
webhooks called by the API server at 127.0.0.1, and a ClusterQueue for the nodes' CPUs, memory and GPUs.

In a real cluster Kueue runs as a Deployment behind a Service and makes its own webhook certificate for
that Service. Here there is no Service to route to, so its internal certificate management is off: the
webhook serves a certificate from the local CA for 127.0.0.1, and the webhook configurations name that
address (``clientConfig.url``). Kueue then reads its metrics certificate from a fixed path,
/etc/kueue/metrics/certs, where a Deployment mounts a Secret; the manager runs in a mount namespace of its
own with that path on a small tmpfs, so nothing is written to the host's /etc.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kompi_components.contract import GPU_RESOURCE as GPU
from kompi_components.manifests import quantities
from kompi_engine.build.kueue import BINARY, CRD_DIR

PROCESS_NAME = "kueue"
USER = "kompi:kueue"
NAMESPACE = "kueue-system"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
API = "kueue.x-k8s.io/v1beta2"
FLAVOR = "default-flavor"
CLUSTER_QUEUE = "kompi-gpus"
METRICS_CERT_DIR = "/etc/kueue/metrics/certs"  # Kueue's, fixed when it does not manage its certificates
# The integrations a platform team enables (Kueue's shipped configuration enables these and more): kompi's
# pods must be admitted as one pod group even when Kueue also manages Jobs and StatefulSets.
FRAMEWORKS = ["batch/job", "pod", "statefulset"]
_KUEUE_GROUP = "kueue.x-k8s.io"
_BOTH = ["CREATE", "UPDATE"]
# (kind, API group, resources, operations) of each webhook the API server calls, mutating and validating:
# Kueue's own objects, and the kinds of the frameworks above.
_MUTATING = [
    ("pod", "", ["pods"], ["CREATE"]),
    ("job", "batch", ["jobs"], ["CREATE"]),
    ("statefulset", "apps", ["statefulsets"], _BOTH),
    ("workload", _KUEUE_GROUP, ["workloads"], ["CREATE"]),
    ("clusterqueue", _KUEUE_GROUP, ["clusterqueues"], ["CREATE"]),
    ("resourceflavor", _KUEUE_GROUP, ["resourceflavors"], ["CREATE"]),
]
_VALIDATING = [
    ("pod", "", ["pods"], _BOTH),
    ("job", "batch", ["jobs"], _BOTH),
    ("statefulset", "apps", ["statefulsets"], _BOTH),
    ("workload", _KUEUE_GROUP, ["workloads", "workloads/status"], _BOTH),
    ("clusterqueue", _KUEUE_GROUP, ["clusterqueues"], _BOTH),
    ("cohort", _KUEUE_GROUP, ["cohorts"], _BOTH),
    ("resourceflavor", _KUEUE_GROUP, ["resourceflavors"], _BOTH),
]
# Kueue's webhooks for workload kinds skip these namespaces, as its own manifests do.
_SKIPPED = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", NAMESPACE]}


@dataclass(frozen=True)
class Settings:
    """A platform team's own choices in Kueue's Configuration that decide which of kompi's objects it manages:
    off and unset by default (Kueue's own defaults), set by tests that show what kompi's `up` says of them."""

    # Kueue manages a Job, StatefulSet or pod that names no queue (its Job integration then takes the one-shot Job)
    manage_jobs_without_queue_name: bool = False
    # the namespaces whose jobs Kueue manages (a label selector); None: Kueue's default, all but its own and
    # kube-system. With ManagedJobsNamespaceSelectorAlwaysRespected (on by default since v0.15) it also bounds
    # the pods that name a queue.
    managed_jobs_namespace_selector: dict[str, Any] | None = None


def crd_files(bin_dir: Path) -> list[Path]:
    return sorted((bin_dir / CRD_DIR).glob("*.yaml"))


def crd_names(bin_dir: Path) -> list[str]:
    """kueue.x-k8s.io_workloads.yaml -> workloads.kueue.x-k8s.io"""
    return [f"{path.stem.split('_', 1)[1]}.{path.stem.split('_', 1)[0]}" for path in crd_files(bin_dir)]


def manager_config(
    state: Path, webhook_port: int, health_port: int, settings: Settings | None = None
) -> dict[str, Any]:
    settings = settings or Settings()
    config: dict[str, Any] = {
        "apiVersion": CONFIG_API,
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "leaderElection": {"leaderElect": False},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},  # no metrics listener (its certificate is still read: see above)
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(state / "kueue" / "webhook")},
        "internalCertManagement": {"enable": False},
        "clientConnection": {"qps": 1000, "burst": 2000},
        "manageJobsWithoutQueueName": settings.manage_jobs_without_queue_name,
        "integrations": {"frameworks": FRAMEWORKS},
        # its on-demand visibility API server needs an APIService and certificates of its own
        "featureGates": {"VisibilityOnDemand": False},
    }
    if settings.managed_jobs_namespace_selector is not None:
        config["managedJobsNamespaceSelector"] = settings.managed_jobs_namespace_selector
    return config


def manager_command(bin_dir: Path, config_file: Path, kubeconfig: Path) -> list[str]:
    return [str(bin_dir / BINARY), f"--config={config_file}", f"--kubeconfig={kubeconfig}"]


def own_etc_launcher(state: Path) -> list[str]:
    """What execs the manager in a mount namespace of its own, with its metrics certificate at the path it
    reads (a tmpfs over /etc there: nothing of the host's /etc is read or written)."""
    certs = state / "kueue" / "webhook"
    own_namespace = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        own_namespace[1:1] = ["--user", "--map-root-user"]
    script = (
        f'mount -t tmpfs -o size=1m,mode=0755 kompi-kueue /etc && mkdir -p {METRICS_CERT_DIR} && cp "$1" "$2" '
        f'{METRICS_CERT_DIR}/ && shift 2 && exec "$@"'
    )
    return [*own_namespace, "--", "sh", "-c", script, "kueue", str(certs / "tls.crt"), str(certs / "tls.key")]


def _webhooks(verb: str, entries: list[tuple[str, str, list[str], list[str]]], port: int, ca: str) -> list[Any]:
    """Kueue serves each at /VERB-GROUP-VERSION-KIND (the group's dots as dashes; the core group empty)."""
    hooks = []
    for kind, group, resources, operations in entries:
        version = "v1beta2" if group == _KUEUE_GROUP else "v1"
        hook: dict[str, Any] = {
            "name": f"{verb[0]}{kind}.kb.io",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}/{verb}-{group.replace('.', '-')}-{version}-{kind}",
                "caBundle": ca,
            },
            "rules": [
                {"apiGroups": [group], "apiVersions": [version], "resources": resources, "operations": operations}
            ],
        }
        if group != _KUEUE_GROUP:
            hook["namespaceSelector"] = {"matchExpressions": [_SKIPPED]}
        hooks.append(hook)
    return hooks


def webhook_configurations(port: int, ca_bundle: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": f"kompi-kueue-{verb}"},
            "webhooks": _webhooks(verb, entries, port, ca_bundle),
        }
        for kind, verb, entries in (
            ("MutatingWebhookConfiguration", "mutate", _MUTATING),
            ("ValidatingWebhookConfiguration", "validate", _VALIDATING),
        )
    ]


def setup_manifests() -> list[dict[str, Any]]:
    """Kueue's namespace and its user's rights: cluster-admin, as on this local cluster only (a real cluster
    installs Kueue with the ClusterRole its release ships)."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kompi:kueue"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}],
        },
    ]


def allocatable(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """What the nodes can give to pods, summed: CPU, memory and GPUs (0 on nodes without any)."""
    wanted = ("cpu", "memory", GPU)
    parts = [
        (1, {name: quantities.parse(node["status"]["allocatable"].get(name, 0)) for name in wanted}) for node in nodes
    ]
    return {name: "0" for name in wanted} | quantities.total(parts)


def quota_manifests(capacity: dict[str, str]) -> list[dict[str, Any]]:
    """One flavor and a ClusterQueue holding the nodes' whole capacity, for LocalQueues in any namespace."""
    quotas: list[dict[str, Any]] = [{"name": name, "nominalQuota": capacity[name]} for name in ("cpu", "memory", GPU)]
    return [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}},
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": CLUSTER_QUEUE},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": [quota["name"] for quota in quotas],
                        "flavors": [{"name": FLAVOR, "resources": quotas}],
                    }
                ],
            },
        },
    ]
