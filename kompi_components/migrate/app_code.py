"""appCodesToSync[]: git repositories fetched into every pod (kompi:appCode)."""

from __future__ import annotations

from typing import Any

from kompi_components.migrate.scalars import text, whole_number
from kompi_components.migrate.translation import Translation

# git-sync v2 fetched this branch when GIT_SYNC_BRANCH was empty (the chart left it empty if unset).
GIT_SYNC_V2_BRANCH = "master"


def _sub_path(app: dict[str, Any], path: str, result: Translation) -> str | None:
    """kube-openmpi's subPath was relative to git-sync's root, where the checkout was <name>/; kompi's is
    relative to the repository."""
    name = str(app.get("name", ""))
    sub_path = app.get("subPath")
    if not sub_path:
        result.warn(
            f"{path}.mountPath",
            f"the repository is now at {app.get('mountPath')} itself (kube-openmpi put it in "
            f"{app.get('mountPath')}/{name})",
        )
        return None
    old = text(sub_path, f"{path}.subPath").strip("/")
    if old != name and not old.startswith(f"{name}/"):
        result.warn(
            f"{path}.subPath",
            f"kept {old!r}, but it did not start with {name}/ (the checkout in kube-openmpi's git-sync root); "
            "kompi's subPath is relative to the repository: check it",
        )
        return old
    new = old.removeprefix(f"{name}/") if old != name else None
    result.warn(
        f"{path}.subPath",
        f"{old!r} is now {new!r}: kompi's subPath is relative to the repository, not to git-sync's root",
    )
    return new


def _copy(app: dict[str, Any], index: int, old: str, new: str, entry: dict[str, Any], result: Translation) -> None:
    if app.get(old) is not None:
        entry[new] = app[old]
        result.origin(f"appCode[{index}].{new}", f"appCodesToSync[{index}].{old}")


def _retry_wait(app: dict[str, Any], index: int, entry: dict[str, Any], result: Translation) -> None:
    path = f"appCodesToSync[{index}].fetchWaitSecond"
    wait = app.get("fetchWaitSecond")
    seconds = 0 if wait is None else whole_number(wait, path, "a number of seconds")
    if seconds <= 0:
        if wait is not None:
            result.accept(path)
        return
    entry["retryWaitSeconds"] = seconds
    result.origin(f"appCode[{index}].retryWaitSeconds", path)
    result.warn(
        path,
        f"had no effect in kube-openmpi (git-sync v2 one-time mode stops at the first failure); kompi waits "
        f"{seconds}s between retries (kompi:appCode[{index}].retries, default 5)",
    )


def _entry(app: dict[str, Any], index: int, result: Translation) -> dict[str, Any]:
    """One appCode entry, its keys in the order of kompi's schema."""
    path = f"appCodesToSync[{index}]"
    entry: dict[str, Any] = {}
    _copy(app, index, "name", "name", entry, result)
    _copy(app, index, "gitRepo", "repo", entry, result)
    branch = app.get("gitBranch")
    entry["ref"] = GIT_SYNC_V2_BRANCH if branch in (None, "") else text(branch, f"{path}.gitBranch")
    result.origin(f"appCode[{index}].ref", f"{path}.gitBranch")
    _copy(app, index, "mountPath", "mountPath", entry, result)
    sub_path = _sub_path(app, path, result)
    if sub_path:
        entry["subPath"] = sub_path
        result.origin(f"appCode[{index}].subPath", f"{path}.subPath")
    _copy(app, index, "gitSecretName", "sshKeySecret", entry, result)
    if app.get("gitSecretName"):
        result.warn(
            f"{path}.gitSecretName",
            f"Secret {app['gitSecretName']} needs a 'known_hosts' key next to 'ssh': kompi verifies the git "
            "host's key (kube-openmpi did not); add the host's line from ssh-keyscan",
        )
    _retry_wait(app, index, entry, result)
    return entry


def translate_app_code(values: dict[str, Any], result: Translation) -> None:
    apps = values.get("appCodesToSync")
    if not apps:
        if apps is not None:
            result.accept("appCodesToSync")
        return
    result.set("appCode", [_entry(app, index, result) for index, app in enumerate(apps)], "appCodesToSync")
