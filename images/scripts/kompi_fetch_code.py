#!/usr/bin/python3 -IS
"""kompi-fetch-code: one git checkout of a repository at a branch, tag or commit, for an init container.

kompi's own fetcher of app code (kompi:appCode), run from kompi's image as the pod's user, in place of
git-sync (which kompi keeps as an option). It fetches REF alone (depth 1) into ROOT/.fetch, checks it out
detached and renames the tree to ROOT/CHECKOUT, which the MPI container mounts read-only; so a pod never
sees half a checkout. Failures that another try can mend (the server does not answer, a reset
connection) are retried RETRIES times, WAIT seconds apart; failures that cannot (a ref or repository that
does not exist, a host key that is not the pinned one, a deploy key the server refuses) end the first
try. Either way the last line on stderr, which the pod keeps as its termination message, names the
repository and the reason.

Over ssh the deploy key and known_hosts come from files (a Secret's), the host key is verified unless
--insecure-skip-host-key-check, and the image's ssh client configuration (made for the MPI cluster's own
port) is not read. Python standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

PROGRAM = "kompi-fetch-code"
WORK = ".fetch"  # under ROOT: the fetch in progress, and the private copy of the deploy key
# The kubelet mounts this file into every container; elsewhere (a test on a host) the variable names one.
TERMINATION_LOG = Path(os.environ.get("KOMPI_TERMINATION_LOG", "/dev/termination-log"))
# kompi_components.contract.CANNOT_SUCCEED_EXIT: no restart of this container can mend the failure, so
# `kompi up` reports it at once; 1 for what a later restart may mend (the retries ran out)
CANNOT_SUCCEED_EXIT = 78
# (what git printed, why no other try can succeed): the first match names the reason
PERMANENT = (
    (
        re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known"),
        "the git host's key is not the one in known_hosts (check the Secret's known_hosts, or ssh-keyscan the host)",
    ),
    (re.compile(r"Permission denied \(publickey"), "the git server refused the deploy key (the Secret's 'ssh' key)"),
    (re.compile(r"No user exists for uid"), "ssh needs a passwd entry for the pod's uid (run as the image's user)"),
    (re.compile(r"couldn't find remote ref|not our ref|unadvertised object"), "no such branch, tag or commit"),
    (
        re.compile(
            r"[Rr]epository not found|does not appear to be a git repository|not exported|"
            r"Authentication failed|could not read Username"
        ),
        "no such repository, or it needs credentials",
    ),
)
# what git adds after any failure over ssh
GENERIC = re.compile(r"Could not read from remote repository|correct access rights|and the repository exists")
# user[:password]@ after a URL's scheme; over http(s) a user alone may be a token
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<user>[^/@\s:]*)(?P<password>:[^/@\s]*)?@")


class Failure(Exception):
    def __init__(self, reason: str, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


def redacted(url: str) -> str:
    """The URL (or a line with URLs) without credentials: they must not reach logs or the termination message."""

    def keep(match: re.Match[str]) -> str:
        scheme = match["scheme"]
        if scheme.startswith("http") or match["password"]:
            return scheme
        return f"{scheme}{match['user']}@"  # an ssh:// user (git, root) is no secret

    return _USERINFO.sub(keep, url)


def classify(stderr: str) -> Failure:
    for pattern, reason in PERMANENT:
        if pattern.search(stderr):
            return Failure(reason, permanent=True)
    # the last line that says something: ssh's or the socket's own words come before git's generic ones
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not GENERIC.search(line)]
    last = lines[-1].removeprefix("fatal: ").removeprefix("error: ") if lines else "git failed"
    return Failure(redacted(last), permanent=False)


class Fetcher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.repo: str = args.repo
        self.ref: str = args.ref
        self.root = Path(args.root)
        self.target = self.root / args.checkout
        self.work = self.root / WORK
        self.sub_path: str | None = args.sub_path
        self.env = self._environment(args)

    def _environment(self, args: argparse.Namespace) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        # HOME for git's own files: the pod's may be missing or read-only
        env |= {"HOME": str(self.work), "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
        if args.ssh_key or args.insecure_skip_host_key_check:
            env["GIT_SSH_COMMAND"] = shlex.join(self._ssh(args))
        return env

    def _ssh(self, args: argparse.Namespace) -> list[str]:
        # -F /dev/null: the image's ssh_config is the MPI cluster's (its port, its known_hosts)
        command = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
        if args.ssh_key:
            command += ["-i", str(self.work / "key"), "-o", "IdentitiesOnly=yes"]
        if args.insecure_skip_host_key_check:
            return [*command, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
        known = args.known_hosts or "/dev/null"
        checked = ["StrictHostKeyChecking=yes", f"UserKnownHostsFile={known}", "GlobalKnownHostsFile=/dev/null"]
        return [*command, *(part for option in checked for part in ("-o", option))]

    def prepare(self, ssh_key: str | None) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(mode=0o700, parents=True)
        if ssh_key:
            # ssh refuses a key that others can read, and the kubelet mounts Secrets group-readable
            key = self.work / "key"
            key.write_bytes(Path(ssh_key).read_bytes())
            key.chmod(0o600)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        result = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise classify(result.stderr)
        return result.stdout

    def fetch_once(self) -> str:
        tree = self.work / "tree"
        shutil.rmtree(tree, ignore_errors=True)
        self.git("init", "--quiet", str(tree))
        self.git("fetch", "--quiet", "--depth", "1", "--no-tags", self.repo, self.ref, cwd=tree)
        self.git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", "FETCH_HEAD", cwd=tree)
        if self.sub_path and not (tree / self.sub_path).is_dir():
            # the kubelet would mount an empty directory in its place
            raise Failure(f"the checkout has no directory {self.sub_path} (kompi:appCode[].subPath)", permanent=True)
        return self.git("rev-parse", "HEAD", cwd=tree).strip()

    def publish(self) -> None:
        shutil.rmtree(self.target, ignore_errors=True)  # an earlier run's, if the pod's sandbox restarted
        (self.work / "tree").rename(self.target)
        shutil.rmtree(self.work, ignore_errors=True)  # the key copy too


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="git URL (https://, ssh://, git@host:path, git://)")
    parser.add_argument("--ref", default="HEAD", help="branch, tag or full commit id (default: HEAD)")
    parser.add_argument("--root", required=True, help="the volume to check out into")
    parser.add_argument("--checkout", default="current", help="the checkout's directory under --root")
    parser.add_argument("--sub-path", help="a directory the checkout must have (the one the pod mounts)")
    parser.add_argument("--ssh-key", help="deploy key file (its mode does not matter: a private copy is used)")
    parser.add_argument("--known-hosts", help="known_hosts file with the git host's key")
    parser.add_argument("--insecure-skip-host-key-check", action="store_true")
    parser.add_argument("--retries", type=int, default=5, help="failed fetches retried (default: 5)")
    parser.add_argument("--retry-wait", type=float, default=10, help="seconds between tries (default: 10)")
    return parser.parse_args(argv)


def say(line: str) -> None:
    print(f"{PROGRAM}: {line}", file=sys.stderr, flush=True)


def fail(line: str, permanent: bool = False) -> int:
    say(line)
    if TERMINATION_LOG.is_file():  # the pod's termination message: `kompi up` and `kubectl describe` show it
        with contextlib.suppress(OSError):
            TERMINATION_LOG.write_text(f"{PROGRAM}: {line}\n")
    return CANNOT_SUCCEED_EXIT if permanent else 1


def main(argv: list[str]) -> int:
    args = parse(argv)
    fetcher = Fetcher(args)
    where = f"{redacted(args.repo)} at {args.ref}"
    try:
        fetcher.prepare(args.ssh_key)
    except OSError as error:
        return fail(f"cannot fetch {where}: {error}")
    for attempt in range(1, args.retries + 2):
        try:
            commit = fetcher.fetch_once()
        except Failure as failure:
            if failure.permanent or attempt > args.retries:
                tries = f" after {attempt} tries" if attempt > 1 else ""
                return fail(f"cannot fetch {where}{tries}: {failure.reason}", failure.permanent)
            say(f"try {attempt} of {args.retries + 1} failed ({failure.reason}); again in {args.retry_wait:g} s")
            time.sleep(args.retry_wait)
            continue
        fetcher.publish()
        say(f"{where}: commit {commit} in {fetcher.target}")
        return 0
    return 1  # not reached: the last try returns


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
