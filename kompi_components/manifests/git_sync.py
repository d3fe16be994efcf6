"""git-sync v4's arguments for kompi:appCodeFetcher git-sync (app_code.py builds the init container)."""

from __future__ import annotations

from kompi_components.config.schema import AppCode


def args(app: AppCode, root: str, link: str, ssh_key: str, known_hosts: str) -> list[str]:
    result = [
        f"--repo={app.repo}",
        f"--ref={app.ref}",
        f"--root={root}",
        f"--link={link}",
        "--one-time",
        # git-sync aborts after this many consecutive failures, waiting --period between tries.
        f"--max-failures={app.retries + 1}",
        f"--period={app.retry_wait_seconds}s",
    ]
    if app.ssh_key_secret:
        result += [
            f"--ssh-key-file={ssh_key}",
            f"--ssh-known-hosts={'false' if app.insecure_skip_host_key_check else 'true'}",
            f"--ssh-known-hosts-file={known_hosts}",
            # ssh needs a passwd entry for the pod's uid.
            "--add-user",
        ]
    return result
