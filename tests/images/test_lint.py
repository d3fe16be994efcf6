"""Every Dockerfile under images/ is hadolint-clean, every shell script shellcheck-clean.

No containers here: these run with --skip-containers too. The linters are the ones pip installed into
the project's venv (requirements-dev.txt), never a copy that happens to be on the machine.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.images.podman import REPO_ROOT
from tests.tools import project_tool

IMAGES = REPO_ROOT / "images"
SHELLS = ("#!/bin/bash", "#!/bin/sh", "#!/usr/bin/env bash", "#!/usr/bin/env sh")


def dockerfiles() -> list[Path]:
    return sorted(IMAGES.rglob("Dockerfile*"))


def shell_scripts() -> list[Path]:
    def is_shell(path: Path) -> bool:
        first = path.read_text(errors="replace").split("\n", 1)[0]
        return path.suffix == ".sh" or first.startswith(SHELLS)

    shipped = [*IMAGES.rglob("*"), *(IMAGES.parent / "examples").rglob("*")]  # examples/training goes into an image
    return sorted(path for path in shipped if path.is_file() and is_shell(path))


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([project_tool(tool), *args], capture_output=True, text=True, check=False, timeout=120)


def test_the_files_to_lint_are_found() -> None:
    assert {path.relative_to(IMAGES).as_posix() for path in dockerfiles()} >= {"base/Dockerfile", "cuda/Dockerfile"}
    names = {path.name for path in shell_scripts()}
    assert names >= {
        "build.sh",
        "install.sh",
        "kompi-lib.sh",
        "kompi-worker",
        "kompi-master",
        "kompi-ready",
        "gpu-check.sh",
    }


@pytest.mark.parametrize("dockerfile", dockerfiles(), ids=lambda path: path.parent.name)
def test_dockerfile_is_hadolint_clean(dockerfile: Path) -> None:
    result = run_tool("hadolint", "--failure-threshold", "info", str(dockerfile))
    assert result.returncode == 0, result.stdout + result.stderr


def test_shell_scripts_are_shellcheck_clean() -> None:
    result = run_tool("shellcheck", "--external-sources", "--severity", "style", *map(str, shell_scripts()))
    assert result.returncode == 0, result.stdout + result.stderr
