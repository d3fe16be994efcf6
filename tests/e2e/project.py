"""A copy of kompi's project for one end-to-end test: its stack file, changed per test, run through bin/kompi."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kompi_components.render import render_stack
from tests.e2e.live import Kubectl, live_differences, run_command
from tests.stacks import REPO

ONE_SHOT = {"enabled": True, "command": ["mpiexec", "-n", "2", "hostname"], "timeoutSeconds": 60}


@dataclass
class Project:
    """``up``/``preview``/``destroy``/``refresh`` of one stack, as a user runs them (a subprocess of bin/kompi)."""

    directory: Path
    stack: str
    env: dict[str, str]

    @classmethod
    def copy_of(cls, stack: str, directory: Path, kubeconfig: Path, source_stack: str | None = None) -> Project:
        directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "Pulumi.yaml", directory / "Pulumi.yaml")
        shutil.copyfile(REPO / f"Pulumi.{source_stack or stack}.yaml", directory / f"Pulumi.{stack}.yaml")
        env = os.environ | {
            "KUBECONFIG": str(kubeconfig),
            "PULUMI_HOME": str(directory / "pulumi-home"),
            "PULUMI_BACKEND_URL": f"file://{directory / 'state'}",
            "PULUMI_CONFIG_PASSPHRASE": "e2e-test-passphrase",
        }
        return cls(directory, stack, env)

    @property
    def stack_file(self) -> Path:
        return self.directory / f"Pulumi.{self.stack}.yaml"

    def config(self) -> dict[str, Any]:
        return dict(yaml.safe_load(self.stack_file.read_text())["config"])

    def set(self, **values: object) -> None:
        """Set ``kompi:KEY`` values in the stack file, as a user edits it."""
        settings = yaml.safe_load(self.stack_file.read_text())
        for key, value in values.items():
            settings["config"][f"kompi:{key}"] = value
        self.stack_file.write_text(yaml.safe_dump(settings, sort_keys=False))

    def command(self, operation: str, *extra: str) -> list[str]:
        """bin/kompi OPERATION on this stack, without asking."""
        command = [sys.executable, "-m", "kompi_engine", operation, "--stack", self.stack]
        return [*command, "--dir", str(self.directory), "--yes", *extra]

    def kompi(
        self, operation: str, *extra: str, check: bool = True, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        label, command = f"kompi {operation}", self.command(operation, *extra)
        return run_command(label, command, cwd=REPO, env=self.env, timeout=timeout, check=check, tail=3000)

    def start(self, operation: str, *extra: str) -> subprocess.Popen[str]:
        """``operation`` in the background, in its own process group (so a test can kill all of it)."""
        return subprocess.Popen(
            self.command(operation, *extra),
            cwd=REPO,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def use_the_clusters_storage_class(self) -> None:
        """The data stack names a placeholder class (`nfs`); the local cluster has its own default class."""
        volumes = self.config().get("kompi:dataVolumes") or []
        if volumes:
            self.set(dataVolumes=[volume | {"storageClassName": None} for volume in volumes])

    def rendered(self) -> list[dict[str, Any]]:
        return render_stack(self.directory, self.stack)

    @staticmethod
    def last_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        """bin/kompi's last line: the stack outputs after `up`, the change counts after the others."""
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def assert_live_equals_render(kubectl: Kubectl, project: Project) -> None:
    problems = live_differences(kubectl, project.rendered())
    assert not problems, "\n".join(problems)
