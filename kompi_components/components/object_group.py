"""A ComponentResource that owns a group of Kubernetes objects built by kompi.manifests."""

from __future__ import annotations

import pulumi

from kompi_components.components.kubernetes_object import create_object
from kompi_components.manifests.meta import Manifest


class ObjectGroup(pulumi.ComponentResource):
    """``type_name`` is the concept (Network, Workers, Master, ...); children are the objects."""

    resources: list[pulumi.CustomResource]

    def __init__(
        self,
        type_name: str,
        name: str,
        manifests: list[Manifest],
        parent: pulumi.Resource,
        depends_on: list[pulumi.Resource] | None = None,
    ) -> None:
        super().__init__(f"kompi:index:{type_name}", name, None, pulumi.ResourceOptions(parent=parent))
        # Children do not inherit a component's dependencies: each object waits for them itself.
        child_opts = pulumi.ResourceOptions(parent=self, depends_on=depends_on or [])
        self.resources = [create_object(manifest, child_opts) for manifest in manifests]
        self.register_outputs({"objects": [f"{m['kind']}/{m['metadata']['name']}" for m in manifests]})
