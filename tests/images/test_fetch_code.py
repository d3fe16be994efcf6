"""images/scripts/kompi_fetch_code.py, the images' app code fetcher, run as the init container runs it, against
a real git daemon and a real sshd on 127.0.0.1 (tests/git_server.py). No containers: the node tests run it in
pods."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_components.contract import CANNOT_SUCCEED_EXIT
from tests.git_server import GitServer, ssh_keypair
from tests.images.podman import REPO_ROOT

FETCHER = REPO_ROOT / "images" / "scripts" / "kompi_fetch_code.py"
FILES = {"train.py": "print('train')\n", "src/model.py": "LAYERS = 3\n"}
# ports of their own: nothing else in the suite listens there on the loopback
GIT_PORT, SSH_PORT = 19418, 12022


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("git-server"), "127.0.0.1", GIT_PORT, SSH_PORT) as git_server:
        git_server.add_repository("app", FILES, tag="v1")
        git_server.add_repository("secret-app", FILES, private=True)
        git_server.start()
        yield git_server


def fetch(root: Path, *args: str, termination_log: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"]}
    if termination_log is not None:
        env["KOMPI_TERMINATION_LOG"] = str(termination_log)
    command = [sys.executable, str(FETCHER), f"--root={root}", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


def secret_files(server: GitServer, directory: Path, known_hosts: str | None = None) -> list[str]:
    """The deploy key and known_hosts as the kubelet mounts a Secret with fsGroup: group-readable."""
    directory.mkdir(exist_ok=True)
    key, known = directory / "ssh", directory / "known_hosts"
    key.write_bytes(server.deploy_key.read_bytes())
    known.write_text(server.known_hosts() if known_hosts is None else known_hosts)
    for path in (key, known):
        path.chmod(0o440)
    return [f"--ssh-key={key}", f"--known-hosts={known}"]


def checked_out(root: Path) -> dict[str, str]:
    checkout = root / "current"
    return {
        str(p.relative_to(checkout)): p.read_text()
        for p in checkout.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }


@pytest.mark.parametrize("ref", ["main", "v1", "commit", "HEAD"])
def test_a_branch_a_tag_or_a_commit_is_checked_out_whole_over_git(server: GitServer, tmp_path: Path, ref: str) -> None:
    first = server.add_repository("moving", {"version.txt": "1\n"})
    server.commit("moving", {"version.txt": "2\n"})
    wanted = {"main": ("main", "2\n"), "v1": ("v1", None), "commit": (first, "1\n"), "HEAD": ("HEAD", "2\n")}[ref]

    repository = "app" if ref == "v1" else "moving"
    result = fetch(tmp_path, f"--repo={server.git_url(repository)}", f"--ref={wanted[0]}", "--sub-path=.")

    assert result.returncode == 0, result.stderr
    files = checked_out(tmp_path)
    assert files == (FILES if ref == "v1" else {"version.txt": wanted[1]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current"]  # no work tree or key copy left
    assert "commit " in result.stderr.splitlines()[-1]


def test_a_private_repository_over_ssh_with_the_deploy_key_and_the_pinned_host_key(
    server: GitServer, tmp_path: Path
) -> None:
    root = tmp_path / "code"
    result = fetch(root, f"--repo={server.ssh_url('secret-app')}", *secret_files(server, tmp_path / "secret"))

    assert result.returncode == 0, result.stderr
    assert checked_out(root) == FILES


@pytest.mark.parametrize(
    "case", ["no such ref", "wrong host key", "wrong deploy key", "no such repository", "no such subPath"]
)
def test_what_no_retry_can_mend_fails_at_once_naming_the_repository_and_the_reason(
    server: GitServer, tmp_path: Path, case: str
) -> None:
    secret = tmp_path / "secret"
    url, ref = server.ssh_url("secret-app"), "main"
    if case == "no such ref":
        options = secret_files(server, secret)
        ref = "release-9"
        reason = "no such branch, tag or commit"
    elif case == "wrong host key":
        other = ssh_keypair(tmp_path / "other_host_key")
        options = secret_files(server, secret, known_hosts=f"[127.0.0.1]:{SSH_PORT} {other}\n")
        reason = "the git host's key is not the one in known_hosts"
    elif case == "wrong deploy key":
        options = secret_files(server, secret)
        ssh_keypair(tmp_path / "stranger")
        (secret / "ssh").chmod(0o600)
        (secret / "ssh").write_bytes((tmp_path / "stranger").read_bytes())
        reason = "the git server refused the deploy key"
    elif case == "no such subPath":
        options, url = ["--sub-path=docs"], server.git_url("app")
        reason = "the checkout has no directory docs (kompi:appCode[].subPath)"
    else:
        options, url = [], server.git_url("no-such-app")
        reason = "no such repository"
    log = tmp_path / "termination-log"
    log.touch()

    started = time.monotonic()
    result = fetch(tmp_path / "code", f"--repo={url}", f"--ref={ref}", "--retry-wait=30", *options, termination_log=log)

    assert result.returncode == CANNOT_SUCCEED_EXIT  # `kompi up` reports the pod at once
    assert time.monotonic() - started < 25, "a failure no retry can mend was retried"
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"kompi-fetch-code: cannot fetch {url} at {ref}: ")
    assert reason in last
    assert log.read_text().strip() == last  # the pod's termination message
    assert not (tmp_path / "code" / "current").exists()


def test_the_insecure_opt_in_takes_any_host_key(server: GitServer, tmp_path: Path) -> None:
    options = secret_files(server, tmp_path / "secret", known_hosts="")
    root = tmp_path / "code"
    refused = fetch(root, f"--repo={server.ssh_url('secret-app')}", *options)
    taken = fetch(root, f"--repo={server.ssh_url('secret-app')}", *options, "--insecure-skip-host-key-check")

    assert refused.returncode == CANNOT_SUCCEED_EXIT and "not the one in known_hosts" in refused.stderr
    assert taken.returncode == 0, taken.stderr
    assert checked_out(root) == FILES


def test_a_server_that_comes_up_late_is_waited_for_within_the_retries(tmp_path: Path) -> None:
    with GitServer(tmp_path / "late", "127.0.0.1", GIT_PORT + 1, SSH_PORT + 1) as late:
        late.add_repository("app", FILES)
        starter = threading.Timer(2.5, late.start, kwargs={"which": ["git"]})
        starter.start()
        try:
            result = fetch(tmp_path / "code", f"--repo={late.git_url('app')}", "--retries=10", "--retry-wait=1")
        finally:
            starter.join()

    assert result.returncode == 0, result.stderr
    assert "try 1 of 11 failed" in result.stderr
    assert checked_out(tmp_path / "code") == FILES


def test_a_server_that_never_answers_fails_after_the_retries_without_leaking_credentials(tmp_path: Path) -> None:
    url = f"git://127.0.0.1:{GIT_PORT + 2}/app.git"
    token_url = f"https://deploy:s3cr3t-token@127.0.0.1:{GIT_PORT + 2}/app.git"

    refused = fetch(tmp_path / "a", f"--repo={url}", "--retries=2", "--retry-wait=0.1")
    token = fetch(tmp_path / "b", f"--repo={token_url}", "--retries=0")
    bare_token = fetch(tmp_path / "c", f"--repo=https://ghp-bare-token@127.0.0.1:{GIT_PORT + 2}/app.git", "--retries=0")

    assert refused.returncode == 1  # not CANNOT_SUCCEED_EXIT: a restart may find the server up
    assert refused.stderr.count("failed (") == 2
    assert f"cannot fetch {url} at HEAD after 3 tries:" in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].endswith("Connection refused")  # the socket's words, not git's
    assert token.returncode == 1
    assert "s3cr3t-token" not in token.stderr
    assert f"cannot fetch https://127.0.0.1:{GIT_PORT + 2}/app.git at HEAD" in token.stderr
    assert bare_token.returncode == 1
    assert "ghp-bare-token" not in bare_token.stderr
