"""`python -m kompi_components render --stack NAME`: valid multi-document YAML, no key material."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from kompi_components.render import render_stack
from tests.stacks import REPO, stack_names


@pytest.mark.parametrize("stack", stack_names())
def test_render_prints_the_stacks_objects_without_key_material(stack: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kompi_components", "render", "--stack", stack],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert list(yaml.safe_load_all(result.stdout)) == render_stack(REPO, stack)
    for marker in ("PRIVATE KEY", "ecdsa-sha2", "AAAA"):
        assert marker not in result.stdout
