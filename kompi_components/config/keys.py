"""Stack keys and Python names: the one conversion between them.

Users write stack keys in camelCase (``kompi:workerPod``, ``nodeSelector``); the schema's fields and
ClusterArgs' keys are the same names in snake_case (``worker_pod``, ``node_selector``). The schema's models
take their aliases from ``stack_key``, and every other place that goes from one spelling to the other
(the stack program, the component's arguments, the config loader, the generated args and the reference
table) goes through this module.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel


def stack_key(name: str) -> str:
    """A Python name's stack key: ``worker_pod`` -> ``workerPod`` (the schema's alias generator)."""
    return to_camel(name)


def python_names(model: type[BaseModel]) -> dict[str, str]:
    """Stack key -> Python name of each of ``model``'s fields, in the schema's order."""
    return {stack_key(name): name for name in model.model_fields}


def model_of(annotation: object) -> type[BaseModel] | None:
    """The model inside ``annotation`` (``Model``, ``Model | None``, ``list[Model]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        model = model_of(arg)
        if model:
            return model
    return None


def to_stack_keys(values: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``values`` with stack keys, through kompi's own structures (``model`` and the models of its fields);
    Kubernetes objects inside (resources, tolerations, ...) pass as they are. Either spelling is taken;
    unknown keys stay as they are (the config check names them)."""
    return _renamed(values, model, to_stack=True)


def to_python_names(values: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``values`` with Python names, as ``to_stack_keys`` goes the other way."""
    return _renamed(values, model, to_stack=False)


def _renamed(values: Mapping[str, Any], model: type[BaseModel], to_stack: bool) -> dict[str, Any]:
    names = python_names(model)
    renamed: dict[str, Any] = {}
    for key, value in values.items():
        name = key if key in model.model_fields else names.get(key)
        if name is None:
            renamed[key] = value
            continue
        inner = model_of(model.model_fields[name].annotation)
        renamed[stack_key(name) if to_stack else name] = value if inner is None else _inside(value, inner, to_stack)
    return renamed


def _inside(value: Any, model: type[BaseModel], to_stack: bool) -> Any:
    if isinstance(value, Mapping):
        return _renamed(value, model, to_stack)
    if isinstance(value, list):
        return [_inside(item, model, to_stack) for item in value]
    return value
