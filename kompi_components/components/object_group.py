"""A ComponentResource that owns a group of Kubernetes objects built by kompi.manifests."""

from __future__ import annotations

from collections.abc import Callable

import pulumi

from kompi_components.components.kubernetes_object import create_object, legacy_name, logical_name
from kompi_components.components.object_inputs import ObjectInputs
from kompi_components.manifests.meta import Manifest, PlannedObject


class ObjectGroup(pulumi.ComponentResource):
    """``type_name`` is the concept (Network, Workers, Master, ...); children are the objects."""

    objects: list[PlannedObject]
    manifests: list[Manifest]
    resources: list[pulumi.CustomResource]

    def __init__(
        self,
        type_name: str,
        name: str,
        objects: list[PlannedObject],
        parent: pulumi.Resource,
        depends_on: list[pulumi.Resource] | None = None,
        ordered: bool = False,
        *,
        naming: Naming,
        inputs_of: Callable[[PlannedObject], Manifest] | None = None,
    ) -> None:
        """``ordered``: each object waits for the ones before it (RBAC before the pod that uses it);
        ``inputs_of``: each object's resource inputs, where not ``naming.inputs``."""
        super().__init__(f"kompi:index:{type_name}", name, None, pulumi.ResourceOptions(parent=parent))
        # Children do not inherit a component's dependencies: each object waits for them itself.
        self.objects = objects
        self.manifests = [(inputs_of or naming.inputs)(item) for item in objects]  # (each object's resource inputs)
        self.resources = []
        for item, inputs in zip(objects, self.manifests, strict=True):
            before = self.resources if ordered else []
            opts = pulumi.ResourceOptions(parent=self, depends_on=[*(depends_on or []), *before])
            self.resources.append(naming.create(item, inputs, opts))
        listed = [pulumi.Output.concat(m["kind"], "/", m["metadata"]["name"]) for m in self.manifests]
        self.register_outputs({"objects": listed})


class Naming:
    """How a cluster's objects are named and made in Pulumi: ``owner`` (the cluster's resource name) first;
    ``legacy``: the stack may hold them under the names of kompi 0.1.0 (aliases carry them over);
    ``namespace_deferred``: the namespace is an Output, so the Namespace object is named by its role;
    ``inputs`` gives an object its resource inputs."""

    def __init__(self, owner: str, legacy: bool, namespace_deferred: bool, inputs: ObjectInputs) -> None:
        self.owner = owner
        self.legacy = legacy
        self.namespace_deferred = namespace_deferred
        self.inputs = inputs

    def aliases(self, old_name: str) -> list[pulumi.Alias | str]:
        return [pulumi.Alias(name=old_name)] if self.legacy else []

    def create(self, item: PlannedObject, inputs: Manifest, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        """The object's resource, from ``inputs`` (``naming.inputs(item)``), under its Pulumi name."""
        manifest = item.manifest
        by_role = self.namespace_deferred and manifest["kind"] == "Namespace"
        aliases = pulumi.ResourceOptions(aliases=self.aliases(legacy_name(manifest)))
        name = logical_name(self.owner, manifest, by_role)
        return create_object(name, inputs, pulumi.ResourceOptions.merge(opts, aliases), item.options)
