"""Runs the CLI in-process (`kompi_components.__main__.main`) in a scratch kompi project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kompi_components.__main__ import main
from tests.migrate.helpers import Kompi, Run
from tests.stacks import REPO


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A kompi project directory: the repository's Pulumi.yaml and no stack files."""
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    return tmp_path


@pytest.fixture
def kompi(capsys: pytest.CaptureFixture[str]) -> Kompi:
    def run(*argv: object) -> Run:
        code = main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
