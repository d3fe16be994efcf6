"""Golden renders: the exact objects of every stack in the repository, and of the configs beside them in
tests/stacks.py (every feature, one-shot, host networking, a component's args, the defaults), checked in
beside the tests.

A change to what kompi creates changes these files, so it shows in review; the program under Pulumi's mocks
(tests/program) and the component (tests/api) must register exactly these objects too. Regenerate them with
`venv/bin/python -m tests.golden` after a deliberate change and commit them with it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kompi_components.manifests.meta import Manifest
from kompi_components.render import preview_header, render_objects, to_yaml
from kompi_components.stack_files import read_stack_config
from tests.stacks import CONFIGS, REPO, as_config, stack_names

GOLDEN_DIR = Path(__file__).parent
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


def regenerate() -> list[Path]:
    written = []
    for case in golden_cases():
        path = golden_path(case)
        path.write_text(rendered(case))
        written.append(path)
    return written
