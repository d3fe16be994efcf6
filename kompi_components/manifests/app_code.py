"""App code (kompi:appCode): an init container per repository fetches it into an emptyDir before the MPI
container starts, which mounts the checkout read-only.

The fetcher is kompi's own `kompi-fetch-code` from kompi's image by default (kompi:appCodeFetcher kompi), or
git-sync (git_sync.py). Both leave the checkout at CHECKOUT in the volume, so the mounts are the same.
"""

from __future__ import annotations

from typing import Any

from kompi_components import naming
from kompi_components.config.schema import AppCode, KompiConfig
from kompi_components.manifests import git_sync
from kompi_components.manifests.security import container_security_context

CODE_ROOT = "/git"
SECRET_DIR = "/etc/git-secret"
# The checkout under CODE_ROOT: kompi-fetch-code's directory, git-sync's symlink (--link).
CHECKOUT = "current"
# Keys of the Secret that kompi:appCode[].sshKeySecret names.
SSH_KEY = "ssh"
KNOWN_HOSTS = "known_hosts"
FETCH_COMMAND = "kompi-fetch-code"


def _fetch_args(app: AppCode) -> list[str]:
    args = [
        f"--repo={app.repo}",
        f"--ref={app.ref}",
        f"--root={CODE_ROOT}",
        f"--checkout={CHECKOUT}",
        f"--retries={app.retries}",
        f"--retry-wait={app.retry_wait_seconds}",
    ]
    if app.sub_path:
        args.append(f"--sub-path={app.sub_path}")
    if app.ssh_key_secret:
        args += [f"--ssh-key={SECRET_DIR}/{SSH_KEY}", f"--known-hosts={SECRET_DIR}/{KNOWN_HOSTS}"]
    if app.insecure_skip_host_key_check:
        args.append("--insecure-skip-host-key-check")
    return args


def _fetcher(config: KompiConfig, app: AppCode) -> dict[str, Any]:
    if config.app_code_fetcher == "git-sync":
        secret = (f"{SECRET_DIR}/{SSH_KEY}", f"{SECRET_DIR}/{KNOWN_HOSTS}")
        git_sync_args = git_sync.args(app, CODE_ROOT, CHECKOUT, *secret)
        return {"name": f"git-sync-{app.name}", "image": config.git_sync_image, "args": git_sync_args}
    return {
        "name": f"fetch-{app.name}",
        "image": config.image_reference,
        "command": [FETCH_COMMAND, *_fetch_args(app)],
        # the last line the fetcher prints names the repository and why it failed: the pod's status keeps it
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }


def init_container(config: KompiConfig, app: AppCode) -> dict[str, Any]:
    mounts: list[dict[str, Any]] = [{"name": naming.code_volume(app.name), "mountPath": CODE_ROOT}]
    if app.ssh_key_secret:
        mounts.append({"name": naming.git_secret_volume(app.name), "mountPath": SECRET_DIR, "readOnly": True})
    return _fetcher(config, app) | {
        "imagePullPolicy": config.image_pull_policy,
        "volumeMounts": mounts,
        "securityContext": container_security_context(config),
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "512Mi"}},
    }


def volumes(app: AppCode) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = [{"name": naming.code_volume(app.name), "emptyDir": {}}]
    if app.ssh_key_secret:
        result.append(
            {
                "name": naming.git_secret_volume(app.name),
                "secret": {"secretName": app.ssh_key_secret, "defaultMode": 0o400},
            }
        )
    return result


def code_mount(app: AppCode) -> dict[str, Any]:
    """The fetched code, read-only, at the configured path (and subPath of the repository)."""
    sub_path = f"{CHECKOUT}/{app.sub_path}" if app.sub_path else CHECKOUT
    return {"name": naming.code_volume(app.name), "mountPath": app.mount_path, "subPath": sub_path, "readOnly": True}
