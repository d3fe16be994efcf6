"""Reads a stack's config from Pulumi.yaml and Pulumi.<stack>.yaml, as the Pulumi CLI would.

Every problem is one line that names the file, and where the YAML says it, the line and column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kompi_components.config.errors import ConfigError
from kompi_components.config.load import accepts_null
from kompi_components.config.namespaces import kompi_config

EXPECTED_STACK = "a mapping with a config: mapping of kompi:* keys"


class StackFileError(ValueError):
    """A stack or project file is missing or unreadable."""


def _at(path: Path, node: yaml.Node | yaml.Mark | None) -> str:
    mark = node.start_mark if isinstance(node, yaml.Node) else node
    return f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else f"{path}:1:1"


def _compose(path: Path) -> yaml.Node | None:
    try:
        text = path.read_text()
    except OSError as error:
        raise StackFileError(f"{path}: cannot read it: {error.strerror}") from None
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        problem = error.problem or str(error).splitlines()[0]
        raise StackFileError(f"{_at(path, error.problem_mark)}: not valid YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise StackFileError(f"{path}: not valid YAML: {str(error).splitlines()[0]}") from None


def _kind(node: yaml.Node) -> str:
    return "list" if isinstance(node, yaml.SequenceNode) else f"scalar ({_construct(node)!r})"


def _construct(node: yaml.Node) -> Any:
    return yaml.SafeLoader("").construct_object(node, deep=True)


def _entries(path: Path, node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, Any]]:
    """key -> (value node, value) of a mapping node, each key a string."""
    entries: dict[str, tuple[yaml.Node, Any]] = {}
    for key_node, value_node in node.value:
        key = _construct(key_node)
        if not isinstance(key, str):
            raise StackFileError(f"{_at(path, key_node)}: expected a key (text), not {json.dumps(key, default=str)}")
        if key in entries:
            raise StackFileError(f"{_at(path, key_node)}: {key} is set twice (which one would count is unclear)")
        entries[key] = (value_node, _construct(value_node))
    return entries


def _read_mapping(path: Path, what: str) -> dict[str, tuple[yaml.Node, Any]]:
    node = _compose(path)
    if node is None:
        raise StackFileError(f"{path}:1:1: empty file: expected {what}")
    if not isinstance(node, yaml.MappingNode):
        raise StackFileError(f"{_at(path, node)}: expected {what}, not a {_kind(node)}")
    return _entries(path, node)


def _config(path: Path, what: str) -> dict[str, tuple[yaml.Node, Any]]:
    entries = _read_mapping(path, what)
    if "config" not in entries:
        return {}
    node, value = entries["config"]
    if value is None:  # `config:` with nothing under it
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise StackFileError(f"{_at(path, node)}: config: expected a mapping of kompi:* keys, not a {_kind(node)}")
    return _entries(path, node)


def as_pulumi_string(value: object) -> str:
    """A config value as the Pulumi CLI hands it to the program: scalars as text, objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)


def _project_defaults(project_file: Path) -> dict[str, object]:
    defaults: dict[str, object] = {}
    for key, (_, value) in _config(project_file, "a Pulumi project (name:, runtime:, ...)").items():
        if isinstance(value, dict) and ("default" in value or "value" in value):
            defaults[key] = value.get("value", value.get("default"))
        elif not isinstance(value, dict):
            defaults[key] = value
    return defaults


def stack_names(project_dir: Path) -> list[str]:
    return sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in project_dir.glob("Pulumi.*.yaml"))


def _stack_file(project_dir: Path, stack: str) -> Path:
    stack_file = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.is_file():
        names = stack_names(project_dir)
        known = f"the stacks there: {', '.join(names)}" if names else "there is no Pulumi.<stack>.yaml there"
        raise StackFileError(f"no stack file {stack_file.name} in {project_dir.resolve()} ({known})")
    return stack_file


def read_stack_config(project_dir: Path, stack: str) -> dict[str, str]:
    """The ``kompi:*`` config of ``stack``, every value a string as Pulumi gives it."""
    if not (project_dir / "Pulumi.yaml").is_file():
        raise StackFileError(f"no Pulumi.yaml in {project_dir.resolve()}: --dir must be kompi's project directory")
    project_file = project_dir / "Pulumi.yaml"
    stack_file = _stack_file(project_dir, stack)
    entries = {key: value for key, (_, value) in _config(stack_file, EXPECTED_STACK).items()}
    values = kompi_config(_project_defaults(project_file) | entries)
    config: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            raise StackFileError(f"{key}: kompi reads no secret config values; store secrets in Kubernetes Secrets")
        if value is None and not accepts_null(key):
            # An empty `kompi:imageTag:` is null, which the Pulumi CLI would pass on as the text "null".
            raise ConfigError(key, None, "a value (remove the key for the default)")
        config[key] = as_pulumi_string(value)
    return config


PROVIDER_KEYS = ("kubernetes:kubeconfig", "kubernetes:context", "kubernetes:cluster")


def read_provider_settings(project_dir: Path, stack: str) -> dict[str, str]:
    """The Kubernetes provider's settings of ``stack`` (PROVIDER_KEYS) that its files set, project defaults
    included. A secret one cannot be read without the stack's state: refused, naming the key."""
    stack_file = _stack_file(project_dir, stack)
    entries = {key: value for key, (_, value) in _config(stack_file, EXPECTED_STACK).items()}
    values = _project_defaults(project_dir / "Pulumi.yaml") | entries
    settings: dict[str, str] = {}
    for key in PROVIDER_KEYS:
        value = values.get(key)
        if isinstance(value, dict) and set(value) == {"secure"}:
            raise StackFileError(f"{stack_file.name}: {key} is a secret, which kompi cannot decrypt: pass it directly")
        if value is not None:
            settings[key] = as_pulumi_string(value)
    return settings
