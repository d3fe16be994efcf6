"""bin/kompi up|preview|destroy|refresh before Pulumi starts: bad config, confirmation, the user's files."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from kompi_engine import versions
from kompi_engine.cli import add_commands
from kompi_engine.operation.automation import Workspace, run_operation
from tests.stacks import REPO


def project_copy(tmp_path: Path, **config: object) -> Path:
    shutil.copyfile(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    settings = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    settings["config"].update({f"kompi:{key}": value for key, value in config.items()})
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(settings))
    return tmp_path


def kompi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kompi_engine", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=60,
    )


def test_bad_config_is_one_line_exit_2_and_nothing_starts(tmp_path: Path) -> None:
    project = project_copy(tmp_path, workers=-1)
    result = kompi("up", "--stack", "dev", "--dir", str(project), "--yes")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: invalid config kompi:workers = -1: expected a number >= 0"]
    assert not (project / ".kompi").exists()  # no state, no working copy, no passphrase


def test_up_and_destroy_without_a_terminal_need_yes(tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    for operation in ("up", "destroy"):
        result = kompi(operation, "--stack", "dev", "--dir", str(project))
        assert result.returncode == 2
        assert "pass --yes" in result.stderr
    assert not (project / ".kompi").exists()


def test_the_users_stack_file_is_copied_never_rewritten_and_pulumis_salt_survives(tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    original = (project / "Pulumi.dev.yaml").read_text()
    workspace = Workspace(project, "dev")
    workspace.sync_stack_files()
    copy = workspace.work_dir / "Pulumi.dev.yaml"
    copy.write_text(copy.read_text() + "encryptionsalt: v1:abc\n")  # as Pulumi adds it to the copy

    (project / "Pulumi.dev.yaml").write_text(original.replace("workers: 2", "workers: 3"))
    workspace.sync_stack_files()

    synced = yaml.safe_load(copy.read_text())
    assert synced["encryptionsalt"] == "v1:abc"
    assert synced["config"]["kompi:workers"] == 3
    assert "encryptionsalt" not in (project / "Pulumi.dev.yaml").read_text()


def test_the_generated_passphrase_is_private_and_stable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    workspace = Workspace(project_copy(tmp_path), "dev")
    first = Path(workspace.env()["PULUMI_CONFIG_PASSPHRASE_FILE"])
    assert first.stat().st_mode & 0o777 == 0o600
    assert len(first.read_text()) >= 32
    assert Path(workspace.env()["PULUMI_CONFIG_PASSPHRASE_FILE"]).read_text() == first.read_text()


def test_a_backend_url_from_the_environment_wins(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PULUMI_BACKEND_URL", "s3://bucket/kompi")
    assert Workspace(tmp_path, "dev").env()["PULUMI_BACKEND_URL"] == "s3://bucket/kompi"
    monkeypatch.delenv("PULUMI_BACKEND_URL")
    assert Workspace(tmp_path, "dev").env()["PULUMI_BACKEND_URL"] == f"file://{tmp_path / '.kompi' / 'state'}"


def test_the_cache_key_changes_with_any_version(monkeypatch) -> None:
    key = versions.cache_key()
    assert key.startswith(f"k8s-{versions.KUBERNETES}-pulumi-{versions.PULUMI}-")
    monkeypatch.setattr(versions, "KWOK", "0.0.1")
    assert versions.cache_key() != key


def test_the_last_error_line_is_what_kompis_own_step_raised() -> None:
    from kompi_engine.operation.command import last_error_line

    diagnostics = "\n".join(
        [
            "  pulumi-python:dynamic:Resource (kompi-dev-data-guard):",
            "    error: Traceback (most recent call last):",
            '      File "/venv/lib/pulumi/dynamic/__main__.py", line 84, in wrapper',
            "    kompi_components.components.data_guard.DataLossError: refused: this change deletes claims",
            "  pulumi:pulumi:Stack (kompi-dev):",
            "    error: Resource monitor has terminated, shutting down",
            "    error: Program failed with an unhandled exception:",
            "    grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:",
            "error: update failed",
        ]
    )
    assert last_error_line(RuntimeError(diagnostics)) == "refused: this change deletes claims"
    one_line = (
        "  pulumi-python:dynamic:Resource (kompi-dev-data-guard):\n    error: DataLossError: refused: this change"
    )
    assert last_error_line(RuntimeError(f"{one_line}\nerror: update failed")) == "refused: this change"
    job = "  * [DeadlineExceeded] Job was active longer than specified deadline\nerror: update failed"
    assert last_error_line(RuntimeError(job)) == "[DeadlineExceeded] Job was active longer than specified deadline"


def test_replace_reaches_pulumis_up_and_preview_and_the_others_have_none() -> None:
    """`bin/kompi up --replace URN`: what `pulumi up --replace` does (a one-shot run again, docs/one-shot.md)."""

    class Stack:
        def __init__(self) -> None:
            self.calls: list[tuple[str, object]] = []

        def up(self, **kwargs: object) -> object:
            self.calls.append(("up", kwargs.get("replace")))
            return type("Result", (), {"outputs": {}})()

        def preview(self, **kwargs: object) -> object:
            self.calls.append(("preview", kwargs.get("replace")))
            return type("Result", (), {"change_summary": {}})()

    stack, urn = Stack(), "urn:pulumi:dev::kompi::kubernetes:batch/v1:Job::c-job-c-master"
    run_operation(stack, "up", replace=[urn])  # type: ignore[arg-type]
    run_operation(stack, "preview", replace=[urn])  # type: ignore[arg-type]
    run_operation(stack, "up")  # type: ignore[arg-type]
    assert stack.calls == [("up", [urn]), ("preview", [urn]), ("up", None)]
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    assert parser.parse_args(["up", "--stack", "s", "--replace", urn, "--replace", "u2"]).replace == [urn, "u2"]
    assert not hasattr(parser.parse_args(["destroy", "--stack", "s"]), "replace")
