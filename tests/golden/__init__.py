"""Golden renders: the exact objects of every stack in the repository, checked in beside the tests.

A change to what kompi creates changes these files, so it shows in review. Regenerate them with
`venv/bin/python -m tests.golden` after a deliberate change and commit them with it.
"""

from __future__ import annotations

from pathlib import Path

from kompi_components.render import preview_header, render_stack, to_yaml
from tests.stacks import REPO, stack_names

GOLDEN_DIR = Path(__file__).parent
REGENERATE = "venv/bin/python -m tests.golden"


def golden_path(stack: str) -> Path:
    return GOLDEN_DIR / f"{stack}.yaml"


def rendered(stack: str) -> str:
    """What `bin/kompi render --stack STACK` prints."""
    return preview_header(stack) + to_yaml(render_stack(REPO, stack))


def regenerate() -> list[Path]:
    written = []
    for stack in stack_names():
        path = golden_path(stack)
        path.write_text(rendered(stack))
        written.append(path)
    return written
