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
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(f"kompi:index:{type_name}", name, None, opts)
        child_opts = pulumi.ResourceOptions(parent=self)
        self.resources = [create_object(manifest, child_opts) for manifest in manifests]
        self.register_outputs({"objects": [f"{m['kind']}/{m['metadata']['name']}" for m in manifests]})
