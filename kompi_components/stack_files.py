"""Reads a stack's config from Pulumi.yaml and Pulumi.<stack>.yaml, as the Pulumi CLI would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kompi_components.config.errors import PREFIX


class StackFileError(ValueError):
    """A stack or project file is missing or unreadable."""


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as error:
        raise StackFileError(f"cannot read {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise StackFileError(f"{path} is not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise StackFileError(f"{path}: expected a mapping at the top level")
    return data


def as_pulumi_string(value: object) -> str:
    """A config value as the Pulumi CLI hands it to the program: scalars as text, objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)


def _project_defaults(project: dict[str, Any]) -> dict[str, object]:
    defaults: dict[str, object] = {}
    for key, value in (project.get("config") or {}).items():
        if isinstance(value, dict) and ("default" in value or "value" in value):
            defaults[key] = value.get("value", value.get("default"))
        elif not isinstance(value, dict):
            defaults[key] = value
    return defaults


def read_stack_config(project_dir: Path, stack: str) -> dict[str, str]:
    """The ``kompi:*`` config of ``stack``, every value a string as Pulumi gives it."""
    project = _read_yaml(project_dir / "Pulumi.yaml")
    stack_file = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        raise StackFileError(f"no stack file {stack_file.name} in {project_dir}")
    values = _project_defaults(project) | (_read_yaml(stack_file).get("config") or {})
    config: dict[str, str] = {}
    for key, value in values.items():
        if not key.startswith(f"{PREFIX}:"):
            continue
        if isinstance(value, dict) and set(value) == {"secure"}:
            raise StackFileError(f"{key}: kompi reads no secret config values; store secrets in Kubernetes Secrets")
        config[key] = as_pulumi_string(value)
    return config
