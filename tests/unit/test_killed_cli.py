"""What a killed CLI leaves in a local backend: its stale locks are removed (a live operation's lock and other
hosts' locks are kept), and so are the torn metadata files of the stack's checkpoint."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.operation.killed_cli import process_runs, remove_stale_locks, remove_torn_attrs, repair


@pytest.fixture
def fake_pulumi(tmp_path: Path) -> Path:
    """An executable whose process is named `pulumi` (a copy of sleep), so the check meets a real process."""
    program = tmp_path / "bin" / "pulumi"
    program.parent.mkdir()
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    return program


@pytest.fixture
def zombie(fake_pulumi: Path) -> Iterator[int]:
    """A `pulumi` that has exited but was not reaped: what a SIGKILLed CLI becomes under a non-reaping init."""
    process = subprocess.Popen([str(fake_pulumi), "0"])
    deadline = time.monotonic() + 10
    while " Z " not in Path(f"/proc/{process.pid}/stat").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield process.pid
    process.wait()


@pytest.fixture
def running(fake_pulumi: Path) -> Iterator[int]:
    process = subprocess.Popen([str(fake_pulumi), "60"])
    yield process.pid
    process.kill()
    process.wait()


def write_lock(backend: Path, pid: int, hostname: str) -> Path:
    lock = backend / ".pulumi" / "locks" / "organization" / "kompi" / "dev" / f"lock-{pid}.json"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": pid, "hostname": hostname, "timestamp": "2026-12-01T05:09:43Z"}))
    return lock


def test_a_zombie_is_not_a_running_process(zombie: int, running: int) -> None:
    assert process_runs(running, "pulumi")
    assert not process_runs(zombie, "pulumi")
    assert not process_runs(running, "sleep")  # a reused pid under another name is not the CLI


def test_the_lock_of_a_killed_cli_is_removed_and_said(tmp_path: Path, zombie: int) -> None:
    lock = write_lock(tmp_path / "state", zombie, socket.gethostname())
    said: list[str] = []
    removed = remove_stale_locks(f"file://{tmp_path / 'state'}?no_tmp_dir=true", "kompi", "dev", said.append)
    assert removed == [lock] and not lock.exists()
    assert said == [f"removed a stale lock of stack dev: pid {zombie} of 2026-12-01T05:09:43Z is gone"]


def test_a_running_operations_lock_and_another_hosts_lock_are_kept(tmp_path: Path, running: int) -> None:
    ours = write_lock(tmp_path / "state", running, socket.gethostname())
    theirs = write_lock(tmp_path / "state", 999_999_999, "another-host")
    said: list[str] = []
    assert remove_stale_locks(f"file://{tmp_path / 'state'}", "kompi", "dev", said.append) == []
    assert ours.exists() and theirs.exists() and said == []


def test_other_backends_are_not_touched(tmp_path: Path, zombie: int) -> None:
    lock = write_lock(tmp_path / "state", zombie, socket.gethostname())
    assert remove_stale_locks("s3://bucket/state", "kompi", "dev", print) == []
    assert lock.exists()


def _stack_files(backend: Path) -> tuple[Path, Path, Path]:
    stacks = backend / ".pulumi" / "stacks" / "kompi"
    stacks.mkdir(parents=True)
    checkpoint = stacks / "dev.json.attrs"
    backup = stacks / "dev.json.bak.attrs"
    other = stacks / "train.json.attrs"
    return checkpoint, backup, other


def test_a_torn_metadata_file_of_the_stack_is_removed_and_whole_ones_kept(tmp_path: Path) -> None:
    checkpoint, backup, other = _stack_files(tmp_path / "state")
    whole = json.dumps({"user.content_type": "application/octet-stream", "md5": "aGk="}) + "\n"
    checkpoint.write_text("")  # truncated, not yet written: what a SIGKILL at that instant leaves
    backup.write_text(whole)
    other.write_text("")  # another stack's: not this operation's to touch
    dotted = other.with_name("dev.staging.json.attrs")  # another stack whose name starts as this one's
    dotted.write_text("")
    history = tmp_path / "state" / ".pulumi" / "history" / "kompi" / "dev" / "dev-1.checkpoint.json.attrs"
    history.parent.mkdir(parents=True)
    history.write_text('{"user.content_type": "appl')  # cut mid-write
    said: list[str] = []
    removed = remove_torn_attrs(f"file://{tmp_path / 'state'}", "kompi", "dev", said.append)
    assert sorted(removed) == sorted([checkpoint, history])
    assert not checkpoint.exists() and not history.exists() and backup.read_text() == whole and other.exists()
    assert dotted.exists()
    assert "removed the torn metadata file dev.json.attrs of stack dev (a CLI killed while writing it)" in said


def test_repair_takes_both_and_leaves_other_backends(tmp_path: Path, zombie: int) -> None:
    lock = write_lock(tmp_path / "state", zombie, socket.gethostname())
    checkpoint, _, _ = _stack_files(tmp_path / "state")
    checkpoint.write_text("")
    assert repair("s3://bucket/state", "kompi", "dev", print) == []
    assert sorted(repair(f"file://{tmp_path / 'state'}", "kompi", "dev", print)) == sorted([lock, checkpoint])
