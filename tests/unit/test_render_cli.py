"""`bin/kompi render --stack NAME`: valid multi-document YAML, no key material."""

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
    # Its placeholders make it a preview: the first line says so, as a YAML comment.
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"# kompi render --stack {stack}: a preview")
    assert "not for `kubectl apply`" in first and "placeholders" in first


def test_render_help_says_the_output_is_a_preview() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kompi_components", "render", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    text = " ".join(result.stdout.split())
    assert text.startswith("usage: bin/kompi render")
    assert "not for `kubectl apply`" in text and "placeholders" in text
