"""mpiMaster/mpiWorkers.securityContext: which user the pods run as.

kube-openmpi ran as root unless a securityContext said otherwise; kompi runs as the image's user
(uid 1000) unless kompi:runAsRoot, and sets one user for master and workers.
"""

from __future__ import annotations

from typing import Any

from kompi_components import contract
from kompi_components.migrate.errors import ValuesError
from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import whole_number
from kompi_components.migrate.translation import Translation

SECTIONS = ("mpiWorkers", "mpiMaster")
# PodSecurityContext keys kompi takes over; any other key is dropped with a warning.
IMPORTED = ("runAsUser", "runAsGroup", "fsGroup", "runAsNonRoot")


def _user(context: dict[str, Any], path: str, result: Translation) -> tuple[int | None, int | None]:
    """(uid, gid) that one securityContext asks for; None where it leaves the image's default."""
    for key in context:
        if key not in IMPORTED:
            result.warn(
                f"{path}.{key}",
                "not imported: kompi sets the pod security context itself (Pod Security restricted)",
            )
    uid = context.get("runAsUser")
    uid = None if uid is None else whole_number(uid, f"{path}.runAsUser", "a uid")
    group, fs_group = context.get("runAsGroup"), context.get("fsGroup")
    gid_key = "fsGroup" if fs_group is not None else "runAsGroup"
    gid = fs_group if fs_group is not None else group
    gid = None if gid is None else whole_number(gid, f"{path}.{gid_key}", "a gid")
    if group is not None and fs_group is not None and group != fs_group:
        result.warn(f"{path}.runAsGroup", f"kompi uses one gid for runAsGroup and fsGroup: {gid} (fsGroup)")
    return uid, gid


def _contexts(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for section in SECTIONS:
        context = get(values, f"{section}.securityContext")
        if context is None or context == {}:
            continue
        if not isinstance(context, dict):
            raise ValuesError(f"{section}.securityContext", "expected a mapping (a PodSecurityContext)")
        found[section] = context
    return found


def translate_security(values: dict[str, Any], result: Translation) -> None:
    contexts = _contexts(values)
    users = {section: _user(context, f"{section}.securityContext", result) for section, context in contexts.items()}
    if len(set(users.values())) > 1:
        raise ValuesError(
            "mpiMaster.securityContext",
            "asks for another user than mpiWorkers.securityContext; kompi runs master and workers as one user",
        )
    uid, gid = next(iter(users.values()), (None, None))
    for section in SECTIONS:
        path = f"{section}.securityContext"
        if section in contexts:
            continue
        other = f"the user of {next(iter(contexts))}.securityContext" if contexts else f"uid {contract.MPI_UID}"
        result.warn(
            path,
            f"not set: kube-openmpi ran this pod as root; kompi runs it as {other} unless kompi:runAsRoot is true",
        )
    sources = ", ".join(f"{section}.securityContext" for section in contexts)
    if uid == 0:
        result.set("runAsRoot", True, f"{sources} (runAsUser: 0)")
        return
    if uid is None and contexts:
        result.warn(
            f"{next(iter(contexts))}.securityContext",
            f"sets no runAsUser: kube-openmpi ran as root; kompi runs as uid {contract.MPI_UID} "
            "unless kompi:runAsRoot is true",
        )
    if uid is not None:
        result.set("runAsUser", uid, sources)
        if uid != contract.MPI_UID:
            result.warn(
                f"{next(iter(contexts))}.securityContext.runAsUser",
                f"kompi's images have their user at uid {contract.MPI_UID}; uid {uid} needs an image built with it",
            )
    if gid is not None:
        result.set("runAsGroup", gid, sources)
