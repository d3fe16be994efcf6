"""A ComponentResource that owns a group of Kubernetes objects built by kompi.manifests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from kompi_components.components.kubernetes_object import create_object, legacy_name, logical_name
from kompi_components.manifests.meta import Manifest


class ObjectGroup(pulumi.ComponentResource):
    """``type_name`` is the concept (Network, Workers, Master, ...); children are the objects."""

    manifests: list[Manifest]
    resources: list[pulumi.CustomResource]

    def __init__(
        self,
        type_name: str,
        name: str,
        manifests: list[Manifest],
        parent: pulumi.Resource,
        depends_on: list[pulumi.Resource] | None = None,
        ordered: bool = False,
        *,
        naming: Naming,
    ) -> None:
        """``ordered``: each object waits for the ones before it (RBAC before the pod that uses it)."""
        super().__init__(f"kompi:index:{type_name}", name, None, pulumi.ResourceOptions(parent=parent))
        # Children do not inherit a component's dependencies: each object waits for them itself.
        self.manifests = [naming.known(manifest) for manifest in manifests]
        self.resources = []
        for manifest, known in zip(manifests, self.manifests, strict=True):
            before = self.resources if ordered else []
            opts = pulumi.ResourceOptions(
                parent=self, depends_on=[*(depends_on or []), *before], aliases=naming.aliases(legacy_name(manifest))
            )
            self.resources.append(create_object(logical_name(naming.owner, manifest), known, opts))
        listed = [pulumi.Output.concat(m["kind"], "/", m["metadata"]["name"]) for m in self.manifests]
        self.register_outputs({"objects": listed})


class Naming:
    """How a cluster's objects are named in Pulumi: ``owner`` (the cluster's resource name) first; ``legacy``:
    the stack may hold them under the names of kompi 0.1.0 (aliases carry them over). ``known`` gives a
    manifest its values known only during `up`."""

    def __init__(self, owner: str, legacy: bool, known: Callable[[Any], Any]) -> None:
        self.owner = owner
        self.legacy = legacy
        self.known = known

    def aliases(self, old_name: str) -> list[pulumi.Alias | str]:
        return [pulumi.Alias(name=old_name)] if self.legacy else []
