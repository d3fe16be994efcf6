"""ClusterArgs -> what kompi's builders take: a validated KompiConfig, with the Outputs kept apart.

Plain values are checked as stack config is, before anything is registered, with the same one-line
errors. A value that is an Output (the namespace or image of another resource) is known only during
``up``: the config is built with a stand-in for it, so that the objects, their names and their order are
decided at once, and every string that holds the stand-in becomes an Output of the real value, which is
checked with the same messages once known (a bad one fails the resources that use it).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import BaseModel

from kompi_components.config.errors import ConfigError
from kompi_components.config.load import load_config
from kompi_components.config.reference import model_of
from kompi_components.config.schema import KompiConfig

# Config key -> its stand-in while the value is unknown: valid where the real value must be, and found in
# no other string kompi writes.
STAND_INS = {
    "namespace": "kompi-unknown-ns-5f3c",
    "image": "kompi-unknown.invalid/image-5f3c",
    "imageTag": "kompi-unknown-tag-5f3c",
}
# Arguments that are not stack config: how the rollout step reaches the cluster (kompi_components.kube.access).
ACCESS_ARGS = ("kubeconfig", "kube_context", "kube_cluster")


class InvalidArgs(ConfigError, pulumi.RunError):
    """Bad arguments: the ConfigError's one line; a RunError, so Pulumi prints it without a traceback."""

    @classmethod
    def of(cls, error: ConfigError) -> InvalidArgs:
        return cls(error.key, error.value, error.expected, in_kompi=False)


def is_output(value: object) -> bool:
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


def config_keys(args: Mapping[str, Any], model: type[BaseModel] = KompiConfig) -> dict[str, Any]:
    """Python names -> config keys (camelCase), through kompi's own structures; Kubernetes objects inside
    (resources, tolerations, ...) pass as they are. Keys already in camelCase stay; unknown ones too (the
    config check names them)."""
    converted: dict[str, Any] = {}
    for key, value in args.items():
        field = model.model_fields.get(key)
        name = (field.alias or key) if field is not None else key
        inner = model_of(field.annotation) if field is not None else None
        if inner is None:
            inner = next((model_of(f.annotation) for f in model.model_fields.values() if f.alias == key), None)
        converted[name] = _converted(value, inner) if inner is not None else value
    return converted


def _converted(value: Any, model: type[BaseModel]) -> Any:
    if isinstance(value, Mapping):
        return config_keys(value, model)
    if isinstance(value, list):
        return [_converted(item, model) for item in value]
    return value


def whole_numbers(value: Any) -> Any:
    """Numbers as Pulumi's wire carries them (every number a float) made ints again where they are whole,
    as config and Kubernetes take them; Outputs stay."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping) and not is_output(value):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def checked_config(raw: Mapping[str, Any]) -> KompiConfig:
    try:
        return load_config(raw)
    except ConfigError as error:
        raise InvalidArgs.of(error) from None


class _AnOutput:
    def __repr__(self) -> str:
        return "<an Output>"


def _refuse_nested_outputs(key: str, value: Any) -> None:
    if is_output(value):
        expected = f"a plain value (only {', '.join(STAND_INS)} take Outputs)"
        raise InvalidArgs(key, _AnOutput(), expected)
    if isinstance(value, Mapping):
        for inner, item in value.items():
            _refuse_nested_outputs(f"{key}.{inner}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_nested_outputs(f"{key}[{index}]", item)


@dataclass(frozen=True)
class Resolved:
    """``config`` holds the stand-ins of ``deferred`` keys; ``known`` maps each stand-in to its real value,
    after the real config passed the checks (None: nothing deferred)."""

    config: KompiConfig
    deferred: frozenset[str]
    known: pulumi.Output[dict[str, str]] | None
    access: dict[str, Any]


def resolve(args: Mapping[str, Any], default_cluster_name: str) -> Resolved:
    """Raises InvalidArgs for the first bad plain value, before anything is registered."""
    raw = config_keys({key: whole_numbers(value) for key, value in args.items() if key not in ACCESS_ARGS})
    raw.setdefault("clusterName", default_cluster_name)
    outputs = {key: value for key, value in raw.items() if key in STAND_INS and is_output(value)}
    for key, value in raw.items():
        if key not in outputs:
            _refuse_nested_outputs(key, value)
    config = checked_config(raw | {key: STAND_INS[key] for key in outputs})
    access = {key: args[key] for key in ACCESS_ARGS if args.get(key) is not None}
    if not outputs:
        return Resolved(config, frozenset(), None, access)

    def check(values: dict[str, Any]) -> dict[str, str]:
        checked_config(raw | values)
        return {STAND_INS[key]: str(value) for key, value in values.items()}

    known = pulumi.Output.all(**{key: pulumi.Output.from_input(value) for key, value in outputs.items()}).apply(check)
    return Resolved(config, frozenset(outputs), known, access)


def holds_stand_in(text: str) -> bool:
    return any(stand_in in text for stand_in in STAND_INS.values())


def _replaced(value: Any, known: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for stand_in, real in known.items():
            value = value.replace(stand_in, real)
        return value
    if isinstance(value, Mapping):
        return {_replaced(key, known): _replaced(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, known) for item in value]
    return value


def with_known(value: Any, known: pulumi.Output[dict[str, str]] | None) -> Any:
    """``value`` (a manifest, a name, ...) with every stand-in replaced by its real value: the strings that
    hold one become Outputs, the rest stays plain (a dict whose keys hold one becomes one Output)."""
    if known is None:
        return value
    if isinstance(value, str):
        return known.apply(lambda values: _replaced(value, values)) if holds_stand_in(value) else value
    if isinstance(value, Mapping):
        if any(isinstance(key, str) and holds_stand_in(key) for key in value):
            return known.apply(lambda values: _replaced(dict(value), values))
        return {key: with_known(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [with_known(item, known) for item in value]
    return value
