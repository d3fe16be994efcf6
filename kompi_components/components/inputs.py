"""ClusterArgs -> what kompi's builders take: a validated KompiConfig, with the Outputs kept apart.

Plain values are checked as stack config is, before anything is registered, with the same one-line
errors. A value that is an Output (the namespace or image of another resource) is known only during
``up``. Two configs come out then:
- the shape config, with a fixed shape value in place of each Output: it decides at once how many objects
  there are, of which kinds, with which Pulumi options and under which Pulumi names (no deferred value
  changes those); no resource input is made from it;
- the real config, an Output: checked with the same messages once its values are known, it builds the
  objects that are created (a bad value fails the resources that use it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pulumi

from kompi_components.config.errors import ConfigError
from kompi_components.config.keys import to_stack_keys
from kompi_components.config.load import load_config
from kompi_components.config.schema import KompiConfig

# Config key that takes an Output -> its value in the shape config: valid where the real value must be. The
# Pulumi name of an object named after the hash of its spec (the data-preparation Job) is derived from them,
# so they never change.
SHAPE_VALUES = {
    "namespace": "kompi-unknown-ns-5f3c",
    "image": "kompi-unknown.invalid/image-5f3c",
    "imageTag": "kompi-unknown-tag-5f3c",
}
T = TypeVar("T")
# Arguments that are not stack config: how the rollout step reaches the cluster (kompi_components.kube.access).
ACCESS_ARGS = ("kubeconfig", "kube_context", "kube_cluster")


class InvalidArgs(ConfigError, pulumi.RunError):
    """Bad arguments: the ConfigError's one line; a RunError, so Pulumi prints it without a traceback."""

    @classmethod
    def of(cls, error: ConfigError) -> InvalidArgs:
        return cls(error.key, error.value, error.expected, in_kompi=False)


def is_output(value: object) -> bool:
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


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
        expected = f"a plain value (only {', '.join(SHAPE_VALUES)} take Outputs)"
        raise InvalidArgs(key, _AnOutput(), expected)
    if isinstance(value, Mapping):
        for inner, item in value.items():
            _refuse_nested_outputs(f"{key}.{inner}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_nested_outputs(f"{key}[{index}]", item)


@dataclass(frozen=True)
class Resolved:
    """``config``: the shape config (the real one when nothing is deferred); ``real``: the real config once the
    ``deferred`` keys are known and it passed the checks (None: nothing deferred)."""

    config: KompiConfig
    deferred: frozenset[str]
    real: pulumi.Output[KompiConfig] | None
    access: dict[str, Any]

    def derived(self, derive: Callable[[KompiConfig], T]) -> T | pulumi.Output[T]:
        """What ``derive`` makes of the real config: a plain value when nothing is deferred, else an Output."""
        return derive(self.config) if self.real is None else self.real.apply(derive)


def resolve(args: Mapping[str, Any], default_cluster_name: str) -> Resolved:
    """Raises InvalidArgs for the first bad plain value, before anything is registered."""
    plain = {key: whole_numbers(value) for key, value in args.items() if key not in ACCESS_ARGS}
    raw = to_stack_keys(plain, KompiConfig)
    raw.setdefault("clusterName", default_cluster_name)
    outputs = {key: value for key, value in raw.items() if key in SHAPE_VALUES and is_output(value)}
    for key, value in raw.items():
        if key not in outputs:
            _refuse_nested_outputs(key, value)
    config = checked_config(raw | {key: SHAPE_VALUES[key] for key in outputs})
    access = {key: args[key] for key in ACCESS_ARGS if args.get(key) is not None}
    if not outputs:
        return Resolved(config, frozenset(), None, access)
    values = pulumi.Output.all(**{key: pulumi.Output.from_input(value) for key, value in outputs.items()})
    real = values.apply(lambda known: checked_config(raw | {key: str(value) for key, value in known.items()}))
    return Resolved(config, frozenset(outputs), real, access)
