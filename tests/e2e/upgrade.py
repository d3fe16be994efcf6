"""bin/kompi as another kompi version would run it: the same checkout with contract.KOMPI_VERSION changed, or an
earlier commit's tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.project import Project
from tests.stacks import REPO

_AS_VERSION = (
    "import sys; import kompi_components.contract as contract; contract.KOMPI_VERSION = sys.argv.pop(1); "
    "from kompi_engine.cli import main; sys.exit(main(sys.argv[1:]))"
)


def kompi_as(project: Project, version: str, operation: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``operation`` (up, preview, ...) of the project's stack, run as kompi ``version``; must succeed."""
    command = [sys.executable, "-c", _AS_VERSION, version, operation, "--stack", project.stack]
    command += ["--dir", str(project.directory), "--yes"]
    result = subprocess.run(command, cwd=REPO, env=project.env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{operation} as {version}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def checkout(commit: str, into: Path) -> Path:
    """That commit's tree, read from the repository (no worktree: the shared checkout is left alone)."""
    known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=REPO, capture_output=True)
    if known.returncode != 0:
        pytest.fail(f"the repository lacks {commit} (a shallow clone?): fetch its history")
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    # tar itself, not tarfile: extractall's filter= is missing from Debian's Python 3.11.2.
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def earlier_kompi(
    tree: Path, project: Project, operation: str, module: str = "kompi_engine"
) -> subprocess.CompletedProcess[str]:
    """``operation`` of the project's stack run by the kompi in ``tree`` (``checkout``); must succeed. ``module``:
    its command line (``kompi_components`` before the engine had one)."""
    command = [sys.executable, "-m", module, operation, "--stack", project.stack]
    command += ["--dir", str(project.directory), "--yes"]
    env = {key: value for key, value in project.env.items() if key != "PYTHONPATH"}
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"kompi of {tree.name} {operation}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result
