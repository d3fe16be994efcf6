"""mpiMaster.oneShot: run a command once the cluster is up, then release the workers (kompi:oneShot)."""

from __future__ import annotations

from typing import Any

from kompi_components import contract
from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import flag, text
from kompi_components.migrate.translation import Translation

KUBE_OPENMPI_HOSTFILE = "/kube-openmpi/generated/hostfile"
SECTION = "mpiMaster.oneShot"


def _command(values: dict[str, Any], result: Translation) -> None:
    command = get(values, f"{SECTION}.command")
    if command is None:
        return  # kompi's own check names kompi:oneShot.command as missing
    command = text(command, f"{SECTION}.command").strip()
    if KUBE_OPENMPI_HOSTFILE in command:
        command = command.replace(KUBE_OPENMPI_HOSTFILE, contract.HOSTFILE)
        result.warn(f"{SECTION}.command", f"its hostfile {KUBE_OPENMPI_HOSTFILE} is now {contract.HOSTFILE}")
    result.set("oneShot.command", command, f"{SECTION}.command")


def translate_one_shot(values: dict[str, Any], result: Translation) -> None:
    if get(values, SECTION) is None:
        return
    if not flag(get(values, f"{SECTION}.enabled") or False, f"{SECTION}.enabled"):
        result.accept(SECTION)  # disabled: the chart rendered nothing from it
        return
    result.set("oneShot.enabled", True, f"{SECTION}.enabled")
    _command(values, result)
    release = get(values, f"{SECTION}.autoScaleDownWorkers")
    if release is not None:
        result.set(
            "oneShot.releaseWorkers",
            flag(release, f"{SECTION}.autoScaleDownWorkers"),
            f"{SECTION}.autoScaleDownWorkers",
        )
    result.warn(
        SECTION,
        "the master is now a Job that runs the command once every worker is ready and never reruns it; "
        "releasing the workers uses a Role that can only scale this cluster's workers",
    )
