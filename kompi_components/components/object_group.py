"""A ComponentResource that owns a group of Kubernetes objects built by kompi.manifests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from kompi_components.components.kubernetes_object import create_object, legacy_name, logical_name
from kompi_components.manifests.meta import KubeObject, Manifest


class ObjectGroup(pulumi.ComponentResource):
    """``type_name`` is the concept (Network, Workers, Master, ...); children are the objects."""

    manifests: list[Manifest]
    resources: list[pulumi.CustomResource]

    def __init__(
        self,
        type_name: str,
        name: str,
        objects: list[KubeObject],
        parent: pulumi.Resource,
        depends_on: list[pulumi.Resource] | None = None,
        ordered: bool = False,
        *,
        naming: Naming,
    ) -> None:
        """``ordered``: each object waits for the ones before it (RBAC before the pod that uses it)."""
        super().__init__(f"kompi:index:{type_name}", name, None, pulumi.ResourceOptions(parent=parent))
        # Children do not inherit a component's dependencies: each object waits for them itself.
        self.manifests = [naming.known(item.manifest) for item in objects]
        self.resources = []
        for item, known in zip(objects, self.manifests, strict=True):
            before = self.resources if ordered else []
            aliases = naming.aliases(legacy_name(item.manifest))
            opts = pulumi.ResourceOptions(parent=self, depends_on=[*(depends_on or []), *before], aliases=aliases)
            name = logical_name(naming.owner, item.manifest)
            self.resources.append(create_object(name, known, opts, item.options))
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
