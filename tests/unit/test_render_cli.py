"""`bin/kompi render --stack NAME`: valid multi-document YAML, no key material, the caller's paths."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.golden import golden_path
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
    assert result.stdout == golden_path(stack).read_text()  # the checked-in render, to the byte
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


def test_bin_kompi_reads_relative_paths_from_the_callers_directory(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "mine"
    project.mkdir(parents=True)
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(REPO / name, project / name)
    text = (project / "Pulumi.dev.yaml").read_text()
    (project / "Pulumi.dev.yaml").write_text(text.replace("kompi:workers: 2", "kompi:workers: 3"))
    result = subprocess.run(
        [str(REPO / "bin" / "kompi"), "render", "--stack", "dev", "--dir", "mine"],
        capture_output=True,
        text=True,
        cwd=tmp_path / "projects",
        check=False,
    )
    assert result.returncode == 0, result.stderr
    statefulsets = [doc for doc in yaml.safe_load_all(result.stdout) if doc["kind"] == "StatefulSet"]
    assert {doc["spec"]["replicas"] for doc in statefulsets if doc["metadata"]["name"].endswith("-worker")} == {3}
