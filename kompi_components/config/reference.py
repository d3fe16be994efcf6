"""The config reference table in the README, generated from the schema so that it cannot drift."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kompi_components.config.keys import model_of, stack_key
from kompi_components.config.schema import KompiConfig

START = "<!-- config-table:start -->"
END = "<!-- config-table:end -->"

# kube-openmpi values.yaml key each kompi key replaces ("-" where the chart had none).
KUBE_OPENMPI: dict[str, str] = {
    "clusterName": "Helm release name",
    "namespace": "`helm --namespace`",
    "workers": "`mpiWorkers.num`",
    "gpusPerWorker": "`mpiWorkers.resources.limits.nvidia.com/gpu`",
    "image": "`image.repository`",
    "imageTag": "`image.tag`",
    "imagePullPolicy": "`image.pullPolicy`",
    "imagePullSecrets": "`image.pullSecrets[].name`",
    "sshKeyVersion": "`sshKey` (made by `gen-ssh-key.sh`)",
    "runAsRoot": "root was the default",
    "runAsUser": "`mpiMaster/mpiWorkers.securityContext.runAsUser`",
    "runAsGroup": "`mpiMaster/mpiWorkers.securityContext.fsGroup`",
    "masterPod.compute": "-",
    "masterPod": "`mpiMaster.*`",
    "workerPod": "`mpiWorkers.*`",
    "networkPolicy.enabled": "`networkPolicy.enabled` (default false)",
    "networkPolicy.sshAllowFrom": "`sshGateway` (NodePort)",
    "gangScheduling.enabled": "`mpiWorkers.customScheduling.enabled`",
    "gangScheduling.schedulerName": "`mpiWorkers.customScheduling.schedulerName`",
    "gangScheduling.mode": "`customScheduling.podDisruptionBudget.enabled` (pdb)",
    "appCode": "`appCodesToSync`",
    "appCode[].name": "`appCodesToSync[].name`",
    "appCode[].repo": "`appCodesToSync[].gitRepo`",
    "appCode[].ref": "`appCodesToSync[].gitBranch`",
    "appCode[].mountPath": "`appCodesToSync[].mountPath`",
    "appCode[].subPath": "`appCodesToSync[].subPath`",
    "appCode[].sshKeySecret": "`appCodesToSync[].gitSecretName`",
    "appCode[].retryWaitSeconds": "`appCodesToSync[].fetchWaitSecond` (had no effect)",
    "gitSyncImage": "`gitSyncImage.*` (git-sync v2)",
}
_POD_KEYS = ("resources", "nodeSelector", "tolerations", "affinity", "volumes", "volumeMounts")
for _key in _POD_KEYS:
    KUBE_OPENMPI[f"masterPod.{_key}"] = f"`mpiMaster.{_key}`"
    KUBE_OPENMPI[f"workerPod.{_key}"] = f"`mpiWorkers.{_key}`"


def _type_name(annotation: object) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in args)
    if origin is typing.Literal:
        return " \\| ".join(f"`{arg}`" for arg in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return "map"
    if origin is typing.Annotated:
        return _type_name(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    names: dict[object, str] = {int: "int", bool: "bool", str: "string", type(None): "null"}
    return names.get(annotation) or str(getattr(annotation, "__name__", annotation))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value)}`"


def rows(model: type[BaseModel] = KompiConfig, prefix: str = "") -> Iterator[tuple[str, str, str, str, str]]:
    """(key, type, default, description, kube-openmpi equivalent) for every key, nested ones too."""
    for name, field in model.model_fields.items():
        key = prefix + stack_key(name)
        equivalent = KUBE_OPENMPI.get(key.removeprefix("kompi:"), "-")
        yield key, _type_name(field.annotation), _default(field), field.description or "", equivalent
        nested = model_of(field.annotation)
        if nested:
            is_list = typing.get_origin(field.annotation) is list
            yield from rows(nested, f"{key}[]." if is_list else f"{key}.")


def config_table() -> str:
    lines = [
        "| key (`kompi:`...) | type | default | meaning | kube-openmpi |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| `{key}` | {kind} | {default} | {text} | {old} |" for key, kind, default, text, old in rows()]
    return "\n".join([START, *lines, END])
