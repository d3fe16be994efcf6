"""Offline render: every object a stack would create, with no cluster, Pulumi CLI or network."""

from __future__ import annotations

from pathlib import Path

import yaml

from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.manifests.meta import Manifest, PlannedObject
from kompi_components.ssh_identity import placeholder_secret_data
from kompi_components.stack_files import read_stack_config


def planned_objects(raw_config: dict[str, str]) -> list[PlannedObject]:
    """The objects for ``raw_config`` (``kompi:*`` keys) with their Pulumi options; key material is replaced
    by placeholders."""
    config = load_config(raw_config)
    return build_cluster(config, placeholder_secret_data(config.ssh_key_version)).all()


def render_objects(raw_config: dict[str, str]) -> list[Manifest]:
    """The manifests of planned_objects: what `render` prints."""
    return [item.manifest for item in planned_objects(raw_config)]


def render_stack(project_dir: Path, stack: str) -> list[Manifest]:
    return render_objects(read_stack_config(project_dir, stack))


# The SSH Secret holds placeholders (real keys exist only in Pulumi's state): applied with kubectl, the
# pods would start and never trust each other. Said first in the output and in `render --help`.
PREVIEW_NOTE = (
    "a preview of the objects `pulumi up` creates, not for `kubectl apply`: "
    "the SSH Secret holds placeholders, the real keys exist only in Pulumi's state"
)


def preview_header(stack: str) -> str:
    return f"# kompi render --stack {stack}: {PREVIEW_NOTE}.\n"


def to_yaml(objects: list[Manifest]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False)
