"""DataGuard: `pulumi up` refuses a change that would delete claims, unless the stack allows it.

Some changes can only be made by deleting claims: a new size, class or access mode of the workers'
claim template replaces the worker StatefulSet, whose claims go with it; a renamed or removed data
volume deletes its claim. Kubernetes offers no way to keep the data then. The guard is a dynamic
resource whose inputs are what identifies each claim kompi owns (the fields whose change replaces the
object holding it, kompi_components/impact); when that changes, its diff fails during preview and
before `up` touches anything (the objects holding claims wait for it), naming what would be lost,
unless ``kompi:allowDataLoss`` is true.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi.dynamic

from kompi_components.components.dynamic_provider import KompiProvider
from kompi_components.errors import KompiError
from kompi_components.impact.classify import REPLACED_WHEN_CHANGED, get_path, holds_claims
from kompi_components.manifests.meta import PlannedObject

CLAIM_KINDS = ("PersistentVolumeClaim", "StatefulSet")


def claim_identities(objects: list[PlannedObject]) -> dict[str, dict[str, Any]]:
    """For each claim or StatefulSet: whether deleting it deletes claims, and the fields whose change
    would replace it."""
    identities = {}
    for item in objects:
        manifest = item.manifest
        if manifest["kind"] in CLAIM_KINDS:
            meta = manifest["metadata"]
            fields = {path: get_path(manifest, path) for path in REPLACED_WHEN_CHANGED[manifest["kind"]]}
            key = f"{manifest['kind']} {meta['namespace']}/{meta['name']}"
            identities[key] = {"deletesClaims": holds_claims(item), "fields": fields}
    return identities


def losses(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[str]:
    """What applying ``new`` over ``old`` deletes, one phrase each."""
    found = []
    for identity, before in old.items():
        if not before["deletesClaims"]:
            continue  # kept by Pulumi (retain) or holding no claims
        if identity not in new:
            found.append(f"{identity} would be deleted")
            continue
        changed = [path for path, value in before["fields"].items() if new[identity]["fields"].get(path) != value]
        if changed:
            found.append(f"{identity} would be replaced ({', '.join(changed)} changed)")
    return found


class DataLossError(KompiError):
    """Raised by the guard's diff: the change deletes claims and the stack does not allow it."""


class _Provider(KompiProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult("data-guard", {"claims": props["claims"]})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        lost = losses(olds.get("claims") or {}, news["claims"])
        if lost and not news.get("allowDataLoss"):
            raise DataLossError(
                f"refused: this change deletes claims and their data: {'; '.join(lost)}. If you mean it, set "
                "kompi:allowDataLoss: true for this `up` (docs/changes.md says which changes do this)"
            )
        return pulumi.dynamic.DiffResult(changes=olds.get("claims") != news["claims"], replaces=[])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult({"claims": news["claims"]})


class DataGuard(pulumi.dynamic.Resource):
    def __init__(
        self, name: str, claims: pulumi.Input[dict[str, Any]], allow_data_loss: bool, opts: pulumi.ResourceOptions
    ) -> None:
        """``claims``: claim_identities of the cluster's objects."""
        props = {"claims": claims, "allowDataLoss": allow_data_loss}
        super().__init__(_Provider(), name, props, opts)
