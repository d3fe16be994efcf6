"""bin/kompi as another kompi version would run it: the same checkout with contract.KOMPI_VERSION changed."""

from __future__ import annotations

import subprocess
import sys

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
