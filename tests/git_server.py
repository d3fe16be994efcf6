"""A git server for tests, as a team's would be: public repositories over git:// (git daemon, no
credentials) and private ones over ssh (an sshd that takes one deploy key and runs git-shell only).

It listens on one address: 127.0.0.1 for the fetcher's own tests, or the real node's address inside its
network namespace (``prefix`` is the nsenter command), where pods reach it as they reach a git host.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.e2e.live import wait_until

AUTHOR = ["-c", "user.name=kompi tests", "-c", "user.email=tests@kompi.invalid"]
SSHD = "/usr/sbin/sshd"


def ssh_keypair(path: Path) -> str:
    """An ed25519 key at ``path`` (and .pub); the public key's line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


class GitServer:
    def __init__(self, root: Path, host: str, git_port: int, ssh_port: int, prefix: Sequence[str] = ()) -> None:
        self.root, self.host, self.git_port, self.ssh_port = root, host, git_port, ssh_port
        self.prefix = list(prefix)
        self.public = root / "public"
        self.private = root / "private"
        self.ssh_dir = root / "ssh"
        for directory in (self.public, self.private, self.ssh_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self.host_key_line = ssh_keypair(self.ssh_dir / "host_key")
        self.deploy_key = self.ssh_dir / "deploy_key"
        deploy_public = ssh_keypair(self.deploy_key)
        # the key may fetch and push with git-shell, nothing else
        restrictions = (
            'command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"",no-port-forwarding,no-pty,no-agent-forwarding'
        )
        (self.ssh_dir / "authorized_keys").write_text(f"{restrictions} {deploy_public}\n")
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}

    # ------------------------------------------------------------ repositories
    def add_repository(self, name: str, files: Mapping[str, str], private: bool = False, tag: str | None = None) -> str:
        """A bare repository with one commit of ``files`` on branch main (and ``tag``); the commit id."""
        work = self.root / "work" / name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for relative, text in files.items():
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            (work / relative).write_text(text)
        self._git("init", "-q", "-b", "main", str(work))
        self._git("-C", str(work), "add", "-A")
        self._git(*AUTHOR, "-C", str(work), "commit", "-q", "-m", f"{name}: {len(files)} files")
        if tag:
            self._git("-C", str(work), "tag", tag)
        bare = (self.private if private else self.public) / f"{name}.git"
        shutil.rmtree(bare, ignore_errors=True)
        self._git("clone", "-q", "--bare", str(work), str(bare))
        return self._git("-C", str(work), "rev-parse", "HEAD").strip()

    def commit(self, name: str, files: Mapping[str, str], private: bool = False) -> str:
        """One more commit on main of repository ``name``; its id."""
        work = self.root / "work" / name
        for relative, text in files.items():
            (work / relative).write_text(text)
        self._git("-C", str(work), "add", "-A")
        self._git(*AUTHOR, "-C", str(work), "commit", "-q", "-m", "next")
        bare = (self.private if private else self.public) / f"{name}.git"
        self._git("-C", str(work), "push", "-q", str(bare), "main")
        return self._git("-C", str(work), "rev-parse", "HEAD").strip()

    def git_url(self, name: str) -> str:
        return f"git://{self.host}:{self.git_port}/{name}.git"

    def ssh_url(self, name: str) -> str:
        return f"ssh://root@{self.host}:{self.ssh_port}{self.private}/{name}.git"

    def known_hosts(self) -> str:
        return f"[{self.host}]:{self.ssh_port} {self.host_key_line}\n"

    # ------------------------------------------------------------ serving
    def start(self, which: Sequence[str] = ("git", "ssh")) -> None:
        for name in which:
            command = self._git_daemon() if name == "git" else self._sshd()
            log = (self.root / f"{name}.log").open("ab")
            self.daemons[name] = subprocess.Popen([*self.prefix, *command], stdout=log, stderr=log)
        for name in which:
            port = self.git_port if name == "git" else self.ssh_port
            wait_until(f"{name} server on {self.host}:{port}", lambda port=port: self._answers(port), 20)

    def stop(self, which: Sequence[str] = ("git", "ssh")) -> None:
        for name in which:
            daemon = self.daemons.pop(name, None)
            if daemon is not None:
                daemon.terminate()
                daemon.wait(10)

    def _git_daemon(self) -> list[str]:
        return [
            "git", "daemon", f"--base-path={self.public}", "--export-all", "--reuseaddr",
            f"--listen={self.host}", f"--port={self.git_port}", str(self.public),
        ]  # fmt: skip

    def _sshd(self) -> list[str]:
        config = self.ssh_dir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.ssh_port}",
                    f"ListenAddress {self.host}",
                    f"HostKey {self.ssh_dir / 'host_key'}",
                    f"PidFile {self.ssh_dir / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.ssh_dir / 'authorized_keys'}",
                    "PermitRootLogin forced-commands-only",
                    "AllowUsers root",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "LogLevel ERROR",
                ]
            )
            + "\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        return [SSHD, "-D", "-e", "-f", str(config)]

    def _answers(self, port: int) -> bool:
        probe = ["python3", "-c", f"import socket; socket.create_connection(('{self.host}', {port}), 1).close()"]
        return subprocess.run([*self.prefix, *probe], capture_output=True, check=False).returncode == 0

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout

    def __enter__(self) -> GitServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop(list(self.daemons))
