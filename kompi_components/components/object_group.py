"""A ComponentResource that owns a group of Kubernetes objects built by kompi.manifests."""

from __future__ import annotations

from collections.abc import Callable

import pulumi

from kompi_components.components.kubernetes_object import ResourceFactory
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
        factory: ResourceFactory,
        inputs_of: Callable[[PlannedObject], Manifest] | None = None,
    ) -> None:
        """``ordered``: each object waits for the ones before it (RBAC before the pod that uses it);
        ``inputs_of``: each object's resource inputs, where not ``factory.inputs``."""
        super().__init__(f"kompi:index:{type_name}", name, None, pulumi.ResourceOptions(parent=parent))
        # Children do not inherit a component's dependencies: each object waits for them itself.
        self.objects = objects
        self.manifests = [(inputs_of or factory.inputs)(item) for item in objects]  # (each object's resource inputs)
        self.resources = []
        for item, inputs in zip(objects, self.manifests, strict=True):
            before = self.resources if ordered else []
            opts = pulumi.ResourceOptions(parent=self, depends_on=[*(depends_on or []), *before])
            self.resources.append(factory.create(item, inputs, opts))
        listed = [pulumi.Output.concat(m["kind"], "/", m["metadata"]["name"]) for m in self.manifests]
        self.register_outputs({"objects": listed})
