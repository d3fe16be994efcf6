"""The cluster roles of the node's own clients of the API server (CoreDNS, kube-router): each reads what it
needs, as its own user (the client certificate's CN), not as an administrator."""

from __future__ import annotations

from typing import Any


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ClusterRole with RULES and its binding to the user NAME."""
    group = "rbac.authorization.k8s.io"
    return [
        {"apiVersion": f"{group}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        {
            "apiVersion": f"{group}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": group, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": group, "kind": "User", "name": name}],
        },
    ]


def kube_router_rbac() -> list[dict[str, Any]]:
    """What kube-router's policy controller reads (and the node annotations it writes)."""
    read = ["get", "list", "watch"]
    return _cluster_role(
        "kompi:kube-router",
        [
            {"apiGroups": [""], "resources": ["pods", "namespaces", "services", "endpoints"], "verbs": read},
            {"apiGroups": [""], "resources": ["nodes"], "verbs": [*read, "patch", "update"]},
            {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": read},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": read},
        ],
    )


def coredns_rbac() -> list[dict[str, Any]]:
    """What CoreDNS' kubernetes plugin reads."""
    return _cluster_role(
        "kompi:coredns",
        [
            {"apiGroups": [""], "resources": ["services", "endpoints", "namespaces"], "verbs": ["list", "watch"]},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
        ],
    )
