"""Makes the Pulumi Kubernetes resource of each of a cluster's objects (the only place that does): its Pulumi name
and aliases, its inputs, its options."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kompi_components.manifests.meta import Manifest, ObjectOptions, PlannedObject

_RESOURCE_CLASSES: dict[tuple[str, str], Any] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("apps/v1", "StatefulSet"): k8s.apps.v1.StatefulSet,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("policy/v1", "PodDisruptionBudget"): k8s.policy.v1.PodDisruptionBudget,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def legacy_name(manifest: Manifest) -> str:
    """The name kompi 0.1.0 gave the object (kind and Kubernetes name): an alias, so that stacks made
    with it keep every object."""
    return f"{manifest['kind'].lower()}-{manifest['metadata']['name']}"


def logical_name(owner: str, manifest: Manifest, by_role: bool = False) -> str:
    """Pulumi's name for the object: the owning cluster's resource name, its kind and its Kubernetes name, so
    that clusters of one stack never share one (two may have the same clusterName in two namespaces).
    ``by_role``: the Kubernetes name is known only during `up` (a namespace given as an Output), so the kind
    alone names it."""
    if by_role:
        return f"{owner}-{manifest['kind'].lower()}"
    return f"{owner}-{manifest['kind'].lower()}-{manifest['metadata']['name']}"


def create_object(
    name: str, manifest: Manifest, opts: pulumi.ResourceOptions, options: ObjectOptions
) -> pulumi.CustomResource:
    """``manifest`` may hold Outputs (values known only during `up`); ``options`` are the object's own."""
    if options.retain_on_delete:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
    if options.ignore_changes:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=list(options.ignore_changes)))
    if options.delete_before_replace:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(delete_before_replace=True))
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    fields = {_snake(key): value for key, value in manifest.items() if key not in ("apiVersion", "kind")}
    resource_class = _RESOURCE_CLASSES.get((api_version, kind))
    if resource_class is None:
        # Custom resources (PodGroup) keep apiVersion and kind as inputs.
        return k8s.apiextensions.CustomResource(name, api_version=api_version, kind=kind, opts=opts, **fields)
    return resource_class(name, opts=opts, **fields)  # type: ignore[no-any-return]


class ResourceFactory:
    """Makes each of one cluster's objects into its Pulumi resource: ``owner`` (the cluster's resource name)
    starts every Pulumi name; ``legacy``: the stack may hold the objects under the names of kompi 0.1.0
    (aliases carry them over); ``namespace_deferred``: the namespace is an Output, so the Namespace object is
    named by its role; ``inputs`` gives an object its resource inputs."""

    def __init__(
        self, owner: str, legacy: bool, namespace_deferred: bool, inputs: Callable[[PlannedObject], Manifest]
    ) -> None:
        self.owner = owner
        self.legacy = legacy
        self.namespace_deferred = namespace_deferred
        self.inputs = inputs

    def aliases(self, old_name: str) -> list[pulumi.Alias | str]:
        return [pulumi.Alias(name=old_name)] if self.legacy else []

    def create(self, item: PlannedObject, inputs: Manifest, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        """The object's resource, from ``inputs`` (``factory.inputs(item)``), under its Pulumi name."""
        manifest = item.manifest
        by_role = self.namespace_deferred and manifest["kind"] == "Namespace"
        aliases = pulumi.ResourceOptions(aliases=self.aliases(legacy_name(manifest)))
        name = logical_name(self.owner, manifest, by_role)
        return create_object(name, inputs, pulumi.ResourceOptions.merge(opts, aliases), item.options)
