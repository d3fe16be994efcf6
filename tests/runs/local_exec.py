"""The run client's transport on this machine: commands run here, kompi-run being the image's own script
(images/scripts/kompi_run.py), so that the client's logic meets the real kompi-run without a cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from kompi_components.runs.pod_exec import Completed

SCRIPT = Path(__file__).parents[2] / "images" / "scripts" / "kompi_run.py"


class LocalStream:
    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (closed by chunks())
        self._process = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        self._result: Completed | None = None

    def chunks(self) -> Iterator[bytes]:
        assert self._process.stdout is not None
        try:
            while chunk := os.read(self._process.stdout.fileno(), 65536):
                yield chunk
        except GeneratorExit:  # closed early: the follower goes, as an exec's command does when its stream closes
            self._process.kill()
            raise
        finally:
            code = self._process.wait()
            self._process.stdout.close()
        self._stderr.seek(0)
        self._result = Completed(code, b"", self._stderr.read())
        self._stderr.close()

    def result(self) -> Completed:
        assert self._result is not None
        return self._result


class LocalExec:
    where = "this machine"

    def __init__(self, tmp_path: Path) -> None:
        tools = tmp_path / "bin"
        tools.mkdir()
        (tools / "kompi-run").write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCRIPT}" "$@"\n')
        (tools / "kompi-run").chmod(0o755)
        self.runs = tmp_path / "runs"
        self.env = os.environ | {
            "PATH": f"{tools}:{os.environ['PATH']}",
            "KOMPI_RUNS_DIR": str(self.runs),
            "KOMPI_RESTART_DELAY": "0",
            "KOMPI_STOP_GRACE": "2",
            "KOMPI_HOSTFILE": str(tmp_path / "no-hostfile"),  # no workers to wait for
        }
        self.commands: list[list[str]] = []

    def open(self, command: Sequence[str]) -> LocalStream:
        self.commands.append(list(command))
        return LocalStream(command, self.env)

    def stream(self, command: Sequence[str], on_stdout: Callable[[bytes], object]) -> Completed:
        session = self.open(command)
        for chunk in session.chunks():
            on_stdout(chunk)
        return session.result()

    def run(self, command: Sequence[str]) -> Completed:
        out = bytearray()
        done = self.stream(command, out.extend)
        return replace(done, stdout=bytes(out))
