"""Golden renders: the exact objects of every stack in the repository, and of the configs beside them in
tests/stacks.py (every feature, one-shot, host networking, a component's args, the defaults), checked in
beside the tests.

A change to what kompi creates changes these files, so it shows in review; the program under Pulumi's mocks
(tests/program) and the component (tests/api) must register exactly these objects too. Beside each, in
resources/, the Pulumi resources the program registers for it: type, name, parent, dependencies, provider,
aliases and options (retain on delete, ignored fields, ...). Regenerate them all with
`venv/bin/python -m tests.golden` after a deliberate change and commit them with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kompi_components.manifests.meta import Manifest
from kompi_components.render import preview_header, render_objects, to_yaml
from kompi_components.stack_files import read_stack_config
from tests.pulumi_mocks import Registration, run_program
from tests.stacks import CONFIGS, REPO, as_config, stack_names

GOLDEN_DIR = Path(__file__).parent
RESOURCES_DIR = GOLDEN_DIR / "resources"
REGENERATE = "venv/bin/python -m tests.golden"


def golden_cases() -> list[str]:
    """Every stack's name and every config's name in tests/stacks.CONFIGS."""
    return stack_names() + sorted(CONFIGS)


def case_config(case: str) -> dict[str, str]:
    """The ``kompi:*`` config of a stack or of a named config."""
    return as_config(CONFIGS[case]) if case in CONFIGS else read_stack_config(REPO, case)


def golden_path(case: str) -> Path:
    return GOLDEN_DIR / f"{case}.yaml"


def golden_objects(case: str) -> list[Manifest]:
    """The checked-in objects of ``case``."""
    return list(yaml.safe_load_all(golden_path(case).read_text()))


def rendered(case: str) -> str:
    """What `bin/kompi render --stack STACK` prints; for a named config, the same under its own first line."""
    header = f"# tests/stacks.py CONFIGS[{case!r}]\n" if case in CONFIGS else preview_header(case)
    return header + to_yaml(render_objects(case_config(case)))


def resources_path(case: str) -> Path:
    return RESOURCES_DIR / f"{case}.yaml"


def _short(urn: str) -> str:
    """urn:pulumi:STACK::PROJECT::PARENT$TYPE::NAME -> TYPE::NAME (a provider reference loses its ::ID)."""
    if not urn:
        return ""
    _, _, types, *name = urn.split("::")
    return f"{types.split('$')[-1]}::{'::'.join(name)}"


def _resource(registration: Registration) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": registration.type_, "name": registration.name}
    entry["parent"] = _short(registration.parent)
    entry["dependsOn"] = sorted(_short(urn) for urn in registration.dependencies)
    entry["provider"] = _short(registration.provider.rsplit("::", 1)[0]) if registration.provider else ""
    entry["aliases"] = registration.aliases
    entry["options"] = registration.options
    return {key: value for key, value in entry.items() if value}


def registered(case: str) -> str:
    """The Pulumi resources the program registers for ``case`` under mocks, sorted by type and name."""
    resources = [_resource(registration) for registration in run_program(case_config(case)).registrations]
    resources.sort(key=lambda entry: (entry["type"], entry["name"]))
    return yaml.safe_dump(resources, sort_keys=False, default_flow_style=False)


def regenerate() -> list[Path]:
    written = []
    RESOURCES_DIR.mkdir(exist_ok=True)
    for case in golden_cases():
        for path, text in ((golden_path(case), rendered(case)), (resources_path(case), registered(case))):
            path.write_text(text)
            written.append(path)
    return written
