"""Names kompi derives from user names (containers, volumes, ports) fit DNS labels at the longest allowed."""

from __future__ import annotations

import re
from typing import Any

from kompi_components.config.schema import APP_NAME_MAX
from kompi_components.render import render_objects
from tests.stacks import EVERY_FEATURE, as_config

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
PORT_NAME_MAX = 15
LONGEST_APP = {"name": "a" * APP_NAME_MAX, "repo": "git@x:y/z.git", "mountPath": "/long", "sshKeySecret": "k"}


def _pod_specs() -> list[dict[str, Any]]:
    config = as_config(EVERY_FEATURE | {"appCode": [LONGEST_APP]})
    return [
        manifest["spec"]["template"]["spec"]
        for manifest in render_objects(config)
        if manifest["kind"] in ("StatefulSet", "Job")
    ]


def test_container_volume_and_port_names_fit() -> None:
    specs = _pod_specs()
    assert specs
    for spec in specs:
        for container in spec.get("initContainers", []) + spec["containers"]:
            assert DNS_LABEL.match(container["name"]), container["name"]
            for port in container.get("ports", []):
                assert len(port["name"]) <= PORT_NAME_MAX
        for volume in spec.get("volumes", []):
            assert DNS_LABEL.match(volume["name"]), volume["name"]
