"""The README's first job, run as written: a venv, `pip install ./kompi` (from PyPI's packages, with the
package's dependency ranges), the YAML example, the real `pulumi` command against the local cluster, and
`pulumi up`'s output as the README shows it. (The `kubectl exec ... mpiexec` that follows needs containers:
the real-node tests run the cluster's firstJob command verbatim.)"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

from kompi_engine import paths
from kompi_engine.cluster.local import LocalCluster
from tests.readme_blocks import blocks
from tests.stacks import REPO

CLONE = ("kompi_components", "examples", "pyproject.toml", "README.md")


def _machine(tmp_path: Path, engine_bin: Path, cluster: LocalCluster) -> dict[str, str]:
    """What the README assumes: a clone in ./kompi, ~/.kube/config for the cluster, the Pulumi CLI on PATH."""
    for name in CLONE:
        source, target = REPO / name, tmp_path / "kompi" / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / "state").mkdir()
    shutil.copy(cluster.kubeconfig, home / ".kube" / "config")
    path = [
        str(engine_bin),
        str(paths.plugins_dir()),
        str(Path(sys.executable).parent),
        "/usr/sbin:/usr/bin:/sbin:/bin",
    ]
    return {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        # Pulumi finds its home and `login --local`'s ~ through the user database, not $HOME: both stay here
        "PULUMI_HOME": str(home / ".pulumi"),
        "PULUMI_BACKEND_URL": f"file://{home / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "readme-passphrase",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
    }


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200
    )


def test_the_readme_first_job_runs_as_written(tmp_path: Path, engine_bin: Path, cluster: LocalCluster) -> None:
    commands = blocks("A first job", "sh")[0]
    expected = blocks("A first job", "")[0]
    env = _machine(tmp_path, engine_bin, cluster)
    # `pulumi login --local` initialises the user's own ~/.pulumi (its meta.yaml) whatever $HOME says
    users_pulumi = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".pulumi"
    had_pulumi = users_pulumi.exists()
    result = _bash(commands, tmp_path, env)
    try:
        assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        shown = [line.strip() for line in expected.splitlines() if line.strip()]
        printed = [line.strip() for line in result.stdout.splitlines() if line.strip()]
        last = len(printed) - 1 - printed[::-1].index(shown[0])  # (the preview before the update prints one too)
        assert printed[last : last + len(shown)] == shown, f"pulumi up printed:\n{result.stdout[-3000:]}"
    finally:
        _bash(". ../venv/bin/activate && pulumi destroy --yes", tmp_path / "train", env)
        if not had_pulumi:
            shutil.rmtree(users_pulumi, ignore_errors=True)
