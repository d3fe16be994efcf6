"""Writes the imported config as Pulumi.<stack>.yaml: commented, key order of kompi's schema."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from kompi_components import contract
from kompi_components.config import KompiConfig, load_config
from kompi_components.config.errors import PREFIX
from kompi_components.config.keys import python_names
from kompi_components.migrate.errors import ValuesError
from kompi_components.migrate.translation import Translation
from kompi_components.stack_files import as_pulumi_string


def stack_path(project_dir: Path, stack: str) -> Path:
    return project_dir / f"Pulumi.{stack}.yaml"


def _ordered_keys(config: dict[str, Any]) -> list[str]:
    order = list(python_names(KompiConfig))
    return sorted(config, key=lambda key: order.index(key) if key in order else len(order))


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (shell commands) as literal blocks, the way people write them."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _string)


def _entry(key: str, value: Any) -> list[str]:
    text = yaml.dump({f"{PREFIX}:{key}": value}, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    return [f"  {line}" for line in text.splitlines()]


def stack_text(result: Translation, stack: str, values_files: list[str]) -> str:
    lines = [
        f"# kompi stack {stack!r}, imported from kube-openmpi values: {', '.join(values_files)}",
        f"# by `bin/kompi import-values` (kompi {contract.KOMPI_VERSION}).",
        f"# Check it offline: bin/kompi render --stack {stack}",
    ]
    if result.warnings:
        lines.append("# Import warnings (keys whose meaning changed; see docs/migration.md):")
        lines += [f"#   {notice.path}: {notice.message}" for notice in result.warnings]
    lines.append("config:")
    for key in _ordered_keys(result.config):
        source = result.origins.get(key) or ", ".join(result.sources(key))
        lines.append(f"  # from {source}")
        lines += _entry(key, result.config[key])
    return "\n".join(lines) + "\n"


def validate_text(text: str) -> KompiConfig:
    """Load the stack file's config the way `render` and `pulumi up` do (raises ConfigError)."""
    config = yaml.safe_load(text)["config"]
    return load_config({key: as_pulumi_string(value) for key, value in config.items()})


def write_stack(path: Path, text: str, force: bool) -> None:
    if path.exists() and not force:
        raise ValuesError(str(path), "exists already; pass --force to overwrite it")
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
