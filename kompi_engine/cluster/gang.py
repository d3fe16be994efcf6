"""The local cluster's gang scheduler: scheduler-plugins' Coscheduling as a second scheduler, its PodGroup
controller, and the RBAC both need (they run as their own users, not as system:masters)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kompi_components.config.schema import DEFAULT_SCHEDULERS
from kompi_engine.build.gang_scheduler import CONTROLLER_BINARY, SCHEDULER_BINARY

SCHEDULER_NAME = DEFAULT_SCHEDULERS["scheduler-plugins"]  # the name kompi's pods ask for
SCHEDULER_USER = "kompi:scheduler-plugins"
CONTROLLER_USER = "kompi:scheduler-plugins-controller"
PROCESS_NAMES = ("scheduler-plugins", "scheduler-plugins-controller")
CRD_NAMES = ("podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io")
# How long Permit holds placed members while the rest of the gang is placed (upstream's example value;
# the default, 60 s, only slows tests down). A gang that is refused up front (minResources) never waits.
PERMIT_WAITING_SECONDS = 10
_GROUP_RESOURCES = ["podgroups", "elasticquotas", "podgroups/status", "elasticquotas/status"]


def scheduler_config(kubeconfig: Path, client_rate: dict[str, int]) -> dict[str, Any]:
    """One profile, as scheduler-plugins documents Coscheduling: multiPoint enables it at each point it
    implements (preFilter, postFilter, permit, reserve), and it must be the only queueSort."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)} | client_rate,
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": SCHEDULER_NAME,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                },
                "pluginConfig": [
                    {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": PERMIT_WAITING_SECONDS}}
                ],
            }
        ],
    }


def scheduler_command(bin_dir: Path, state: Path, port: int, config_file: Path) -> list[str]:
    kubeconfig = state / "scheduler-plugins.kubeconfig"
    return [
        str(bin_dir / SCHEDULER_BINARY),
        f"--config={config_file}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={state / 'certs' / 'scheduler-plugins'}",
        "--profiling=false",
    ]


def controller_command(bin_dir: Path, state: Path) -> list[str]:
    # "0" turns off its metrics and probe listeners, which would otherwise bind :8080 and :8081 on every address
    return [
        str(bin_dir / CONTROLLER_BINARY),
        f"--kubeconfig={state / 'scheduler-plugins-controller.kubeconfig'}",
        "--metricsAddr=0",
        "--probeAddr=0",
    ]


def _binding(kind: str, name: str, role: str, user: str, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind.removesuffix("Binding"), "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }


def _role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }


def rbac_manifests() -> list[dict[str, Any]]:
    """The scheduler: what kube-scheduler may do (built-in roles) plus PodGroups; the controller: pods to
    count and PodGroup status to write (as upstream's as-a-second-scheduler chart grants)."""
    groups = {
        "apiGroups": ["scheduling.x-k8s.io"],
        "resources": _GROUP_RESOURCES,
        "verbs": ["get", "list", "watch", "update", "patch"],
    }
    events = {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]}
    pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    return [
        _role(SCHEDULER_USER, [groups]),
        _role(CONTROLLER_USER, [groups, events, pods]),
        _binding("ClusterRoleBinding", SCHEDULER_USER, SCHEDULER_USER, SCHEDULER_USER),
        _binding("ClusterRoleBinding", f"{SCHEDULER_USER}:kube-scheduler", "system:kube-scheduler", SCHEDULER_USER),
        _binding("ClusterRoleBinding", f"{SCHEDULER_USER}:volume-scheduler", "system:volume-scheduler", SCHEDULER_USER),
        # its --authentication-kubeconfig reads the client CA from kube-system's extension-apiserver-authentication
        _binding(
            "RoleBinding",
            f"{SCHEDULER_USER}:authentication-reader",
            "extension-apiserver-authentication-reader",
            SCHEDULER_USER,
            "kube-system",
        ),
        _binding("ClusterRoleBinding", CONTROLLER_USER, CONTROLLER_USER, CONTROLLER_USER),
    ]
