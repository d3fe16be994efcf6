"""git-sync init containers that fetch app code into every pod before the MPI container starts."""

from __future__ import annotations

from typing import Any

from kompi_components import naming
from kompi_components.config.schema import AppCode, KompiConfig
from kompi_components.manifests.security import container_security_context

GIT_ROOT = "/git"
GIT_SECRET_DIR = "/etc/git-secret"
# git-sync publishes each checkout through this symlink under GIT_ROOT.
GIT_LINK = "current"


def _args(app: AppCode) -> list[str]:
    args = [
        f"--repo={app.repo}",
        f"--ref={app.ref}",
        f"--root={GIT_ROOT}",
        f"--link={GIT_LINK}",
        "--one-time",
        # git-sync aborts after this many consecutive failures, waiting --period between tries.
        f"--max-failures={app.retries + 1}",
        f"--period={app.retry_wait_seconds}s",
    ]
    if app.ssh_key_secret:
        args += [
            "--ssh-key-file=" + f"{GIT_SECRET_DIR}/ssh",
            f"--ssh-known-hosts={'false' if app.insecure_skip_host_key_check else 'true'}",
            "--ssh-known-hosts-file=" + f"{GIT_SECRET_DIR}/known_hosts",
            # ssh needs a passwd entry for the pod's uid.
            "--add-user",
        ]
    return args


def init_container(config: KompiConfig, app: AppCode) -> dict[str, Any]:
    mounts: list[dict[str, Any]] = [{"name": naming.code_volume(app.name), "mountPath": GIT_ROOT}]
    if app.ssh_key_secret:
        mounts.append({"name": naming.git_secret_volume(app.name), "mountPath": GIT_SECRET_DIR, "readOnly": True})
    return {
        "name": f"git-sync-{app.name}",
        "image": config.git_sync_image,
        "imagePullPolicy": config.image_pull_policy,
        "args": _args(app),
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
    """The synced code, read-only, at the configured path (and subPath of the repository)."""
    sub_path = f"{GIT_LINK}/{app.sub_path}" if app.sub_path else GIT_LINK
    return {"name": naming.code_volume(app.name), "mountPath": app.mount_path, "subPath": sub_path, "readOnly": True}
