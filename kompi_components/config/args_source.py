"""Writes kompi_components/components/args.py, the component's typed arguments, from the config schema.

The arguments class (``ClusterArgs``, a TypedDict as Pulumi's Python components take) must say what the
schema says, key for key, with the same descriptions: Pulumi's component provider infers the package
schema (and every language's SDK) from its type hints and attribute docstrings. So it is generated from
the pydantic models, and a test keeps the file in step:
``python -m kompi_components.config.args_source > kompi_components/components/args.py``.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel, BeforeValidator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kompi_components.config.keys import stack_key
from kompi_components.config.schema import KompiConfig

# Values a program takes from other resources (a Namespace's name, a built image): pulumi.Input, so that an
# Output flows in. Everything else is plain: it decides which objects exist and what they are called.
OUTPUT_KEYS = ("namespace", "image", "imageTag")

# Not stack config: how kompi's rollout step reaches the cluster that the component's Kubernetes provider
# manages (the stack program takes them from kubernetes:kubeconfig, kubernetes:context, kubernetes:cluster).
ACCESS_FIELDS = {
    "kubeconfig": "the kubeconfig (its content, or a path) of the cluster your Kubernetes provider manages, "
    "for kompi's rollout step, which waits for the pods itself; default: KUBECONFIG, as the default provider. "
    "Kept as a secret",
    "kube_context": "context of that kubeconfig (default: its current context)",
    "kube_cluster": "cluster of that kubeconfig, in place of the context's (as the provider's `cluster`)",
}
DESCRIPTIONS = {"clusterName": "prefix of every object name (default: the resource's name)"}


def _is_model(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def annotation_text(annotation: object) -> str:
    """The TypedDict annotation for a schema annotation: plain types, kompi's own types, Any where the
    schema takes more than one shape."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return annotation_text(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and annotation in (str, int, bool, float):
        return annotation.__name__
    if annotation is Any:
        return "Any"
    if isinstance(annotation, type) and _is_model(annotation):
        return f"{annotation.__name__}Args"
    if origin is Literal:
        return "str"
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return f"{annotation_text(members[0])} | None" if len(members) == 1 else "Any"
    if origin is list:
        return f"list[{annotation_text(typing.get_args(annotation)[0])}]"
    if origin is dict:
        return f"dict[str, {annotation_text(typing.get_args(annotation)[1])}]"
    raise TypeError(f"no argument type for {annotation!r}")


def _models(model: type[BaseModel], found: dict[str, type[BaseModel]]) -> dict[str, type[BaseModel]]:
    """``model`` and every model its fields use, depth first (each class before the ones that use it)."""
    for field in model.model_fields.values():
        for inner in _inner_models(field.annotation):
            _models(inner, found)
    found.setdefault(model.__name__, model)
    return found


def _inner_models(annotation: object) -> list[type[BaseModel]]:
    if _is_model(annotation):
        return [annotation]  # type: ignore[list-item]
    return [model for arg in typing.get_args(annotation) for model in _inner_models(arg)]


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        return "" if isinstance(value, BaseModel) else f" (default: {json.dumps(value)})"
    if field.default is PydanticUndefined:
        return " (required)"
    return f" (default: {json.dumps(field.default)})"


def _quoted(text: str) -> str:
    """As ruff writes it: double quotes, unless single quotes need fewer escapes."""
    if text.count('"') > text.count("'"):
        return "'" + json.dumps(text)[1:-1].replace('\\"', '"').replace("'", "\\'") + "'"
    return json.dumps(text)


WIDTH = 120


def _chunks(text: str, room: int) -> list[str]:
    chunks, line = [], ""
    for word in text.split(" "):
        if line and len(line + word) + 2 > room:
            chunks.append(line)
            line = ""
        line += word + " "
    return [*chunks, line[:-1]]


def _string_lines(text: str, indent: str = "    ") -> list[str]:
    """A string literal on one line, or wrapped in parentheses (still one constant, as docstrings must be)."""
    if len(indent) + len(_quoted(text)) <= WIDTH:
        return [indent + _quoted(text)]
    if len(indent) + len(_quoted(text)) + 2 <= WIDTH:
        return [f"{indent}({_quoted(text)})"]
    chunks = _chunks(text, WIDTH - len(indent) - 4)
    return [f"{indent}(", *(f"{indent}    {_quoted(chunk)}" for chunk in chunks), f"{indent})"]


def _docstring_lines(text: str) -> list[str]:
    if len(_quoted(text)) + 4 <= WIDTH:
        return [f"    {_quoted(text)}"]
    chunks = _chunks(text, WIDTH - 4)
    lines = [chunk.rstrip() for chunk in chunks]
    return [f'    """{lines[0]}', *(f"    {line}" for line in lines[1:]), '    """']


def _field_lines(name: str, field: FieldInfo, top: bool) -> list[str]:
    key = stack_key(name)
    widened = any(isinstance(item, BeforeValidator) for item in field.metadata)
    text = "Any" if widened else annotation_text(field.annotation)
    if top and key in OUTPUT_KEYS:
        text = f"pulumi.Input[{text}]"
    description = DESCRIPTIONS.get(key) if top else None
    doc = description or field.description or ""
    # (a description that names its default already, and clusterName, whose default differs here, say no more)
    if "default" not in doc:
        doc += _default(field)
    return [f"    {name}: {text}", *_string_lines(doc)]


def _used_for(model: type[BaseModel]) -> str:
    """What a model without a docstring is: the description of the config key that takes it."""
    for owner in _models(KompiConfig, {}).values():
        for field in owner.model_fields.values():
            if model in _inner_models(field.annotation):
                text = field.description or model.__name__
                return text[:1].upper() + text[1:]  # not str.capitalize, which lowers "NetworkPolicy"
    return model.__name__


# Each class lists every field, its base model's too (MasterSettingsArgs repeats PodSettingsArgs): Pulumi's
# component analyzer takes a field's description from the docstring under it in its own class only, and
# with `class MasterSettingsArgs(PodSettingsArgs)` sdk/schema.json lost the descriptions of the inherited
# fields (tried 2026-12-05 with the pulumi 3.272.0 SDK: 9 of them, in every language).
def _class_lines(model: type[BaseModel], top: bool) -> list[str]:
    name = "ClusterArgs" if top else f"{model.__name__}Args"
    summary = "The arguments of a kompi cluster (kompi:index:Cluster)." if top else (model.__doc__ or _used_for(model))
    lines = [f"class {name}(TypedDict, total=False):", *_docstring_lines(" ".join(summary.split())), ""]
    for field_name, field in model.model_fields.items():
        lines += [*_field_lines(field_name, field, top), ""]
    if top:
        for field_name, doc in ACCESS_FIELDS.items():
            lines += [f"    {field_name}: pulumi.Input[str]", *_string_lines(doc), ""]
    return lines[:-1]


HEADER = '''"""The typed arguments of kompi's component, generated from the config schema: do not edit.

Regenerate with ``python -m kompi_components.config.args_source > kompi_components/components/args.py``. Keys are the
config keys in snake_case (nested objects take either spelling); values are checked as stack config is, with the
same messages. Only the keys typed ``pulumi.Input`` take Outputs (known during ``up``: checked then).
"""

# No `from __future__ import annotations`: Pulumi's component provider reads these hints at run time.
from typing import Any, TypedDict

import pulumi
'''


def args_module_source() -> str:
    classes = [_class_lines(model, model is KompiConfig) for model in _models(KompiConfig, {}).values()]
    return HEADER + "".join("\n\n" + "\n".join(lines) + "\n" for lines in classes)


if __name__ == "__main__":
    print(args_module_source(), end="")
