"""The real `pulumi` command on a project of its own: a local backend, the engine's binaries, and the kompi
package as pip installs it (its wheel, with the pulumi-resource-kompi console script on PATH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kompi_engine import paths
from tests.e2e.live import run_command
from tests.packaging.test_package import build_wheel

VENV_BIN = Path(sys.executable).parent


def install_kompi(into: Path) -> Path:
    """kompi's wheel installed into ``into`` (pip --target: the venv's Python runs its console script, with the
    runtime dependencies the venv has); returns the directory to put on PYTHONPATH, its bin/ holding the
    provider."""
    wheel = build_wheel(into / "wheel")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(into / "site")]
    subprocess.run([*command, str(wheel)], check=True, capture_output=True, text=True)
    assert (into / "site" / "bin" / "pulumi-resource-kompi").exists()
    return into / "site"


@dataclass
class PulumiCli:
    """``pulumi ARGS`` in ``project``, as a user runs it: the engine's CLI, language host and providers on
    PATH (and the engine's runner of Python dynamic resources), state in a local backend."""

    project: Path
    engine_bin: Path
    site: Path
    home: Path

    def env(self) -> dict[str, str]:
        path = [str(self.engine_bin), str(paths.plugins_dir()), str(self.site / "bin"), str(VENV_BIN)]
        return {
            "PATH": os.pathsep.join([*path, "/usr/sbin:/usr/bin:/sbin:/bin"]),
            "HOME": str(self.home),
            "PYTHONPATH": str(self.site),
            "KOMPI_PYTHON": sys.executable,
            "PULUMI_HOME": str(self.home / ".pulumi"),
            "PULUMI_BACKEND_URL": f"file://{self.home / 'state'}",
            "PULUMI_CONFIG_PASSPHRASE": "e2e-test-passphrase",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            # kompi's rollout step must reach the cluster through the program's kubeconfig, not an ambient one
            "KUBECONFIG": str(self.home / "no-such-kubeconfig"),
        }

    def run(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        (self.home / "state").mkdir(parents=True, exist_ok=True)
        command = ["pulumi", *args, "--non-interactive"]
        label = f"pulumi {' '.join(args)}"
        return run_command(label, command, cwd=self.project, env=self.env(), timeout=timeout, check=check, tail=4000)

    def outputs(self) -> dict[str, Any]:
        return dict(json.loads(self.run("stack", "output", "--json").stdout))

    def resources(self) -> list[dict[str, Any]]:
        exported = json.loads(self.run("stack", "export").stdout)
        return list(exported.get("deployment", {}).get("resources") or [])
