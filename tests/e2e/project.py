"""A copy of kompi's project for one end-to-end test: its stack file, changed per test, run through bin/kompi."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kompi_components.render import render_stack
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.ports import Ports
from tests.e2e.live import Kubectl, live_differences, run_command
from tests.e2e.port_blocks import PortBlock
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

    def up_that_fails(self, within_seconds: float) -> str:
        """`up`, which must fail within ``within_seconds`` saying that pods cannot start; its stderr."""
        started = time.monotonic()
        result = self.kompi("up", check=False)
        took = time.monotonic() - started
        assert result.returncode != 0, result.stdout[-2000:]
        assert took < within_seconds, f"up took {took:.0f} s"
        assert "pods cannot start" in result.stderr, result.stderr[-3000:]
        return result.stderr

    @staticmethod
    def last_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        """bin/kompi's last line: the stack outputs after `up`, the change counts after the others."""
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def assert_live_equals_render(kubectl: Kubectl, project: Project) -> None:
    problems = live_differences(kubectl, project.rendered())
    assert not problems, "\n".join(problems)


@contextmanager
def started_by_up_local(engine_bin: Path, directory: Path, block: PortBlock) -> Iterator[tuple[LocalCluster, Project]]:
    """A dev stack whose `up --local` starts a cluster of its own (a state directory under ``directory``, the
    block's ports), and that cluster; the stack is destroyed and the cluster stopped afterwards."""
    state_home = directory / "state"
    cluster = LocalCluster(state=state_home / "kompi" / "local", bin=engine_bin, ports=block.ports)
    project = Project.copy_of("dev", directory / "project", cluster.kubeconfig)
    offset = block.ports.apiserver - Ports().apiserver
    project.env |= {"XDG_STATE_HOME": str(state_home), "KOMPI_LOCAL_PORT_OFFSET": str(offset)}
    try:
        yield cluster, project
    finally:
        if cluster.processes.running():
            project.kompi("destroy", "--local", check=False)
        cluster.down()
