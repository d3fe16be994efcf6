"""mpiWorkers/mpiMaster.customScheduling: a custom scheduler and kube-batch's PodDisruptionBudget gang."""

from __future__ import annotations

from typing import Any

from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import flag, text
from kompi_components.migrate.translation import Translation

WORKERS = "mpiWorkers.customScheduling"
MASTER = "mpiMaster.customScheduling"
# Imported as asked (pdb mode), but kube-batch is gone from today's clusters: say so, and what to use.
RETIRED = (
    "that is the kube-batch way, and kube-batch is retired: on a cluster without it the pods stay Pending with "
    "no event; move to kompi:gangScheduling.mode scheduler-plugins (a PodGroup for the scheduler-plugins "
    "co-scheduler) or volcano, and drop kompi:gangScheduling.schedulerName"
)


def _scheduler(values: dict[str, Any], section: str) -> str | None:
    if not flag(get(values, f"{section}.enabled") or False, f"{section}.enabled"):
        return None
    name = get(values, f"{section}.schedulerName")
    return text(name, f"{section}.schedulerName") if name else ""


def translate_scheduling(values: dict[str, Any], result: Translation) -> None:
    workers, master = _scheduler(values, WORKERS), _scheduler(values, MASTER)
    if workers is None and master is None:
        for section in (WORKERS, MASTER):
            if get(values, section) is not None:
                result.accept(section)  # disabled: the chart rendered nothing from it
        return
    source = WORKERS if workers is not None else MASTER
    scheduler = workers if workers is not None else master
    result.set("gangScheduling.enabled", True, f"{source}.enabled")
    result.set("gangScheduling.mode", "pdb", f"{WORKERS}.podDisruptionBudget")

    if scheduler:
        result.set("gangScheduling.schedulerName", scheduler, f"{source}.schedulerName")
    else:
        result.warn(f"{source}.schedulerName", "empty: kompi's pdb gang uses the scheduler kube-batch")
    if workers is None:
        result.warn(MASTER, "now schedules master and workers with this scheduler, as one gang (PodDisruptionBudget)")
    elif master is None:
        result.warn(WORKERS, "now applies to the master too: kompi schedules master and workers as one gang")
    elif master == workers:
        result.accept(MASTER)
    else:
        result.warn(f"{MASTER}.schedulerName", f"not imported: kompi schedules master and workers with {workers!r}")
    pdb = get(values, f"{WORKERS}.podDisruptionBudget.enabled")
    if pdb:
        result.warn(
            f"{WORKERS}.podDisruptionBudget",
            f"kompi's PodDisruptionBudget (policy/v1) counts the master too: minAvailable = workers + 1; {RETIRED}",
        )
    else:
        result.warn(
            f"{WORKERS}.podDisruptionBudget.enabled",
            f"false, but kompi's gang always has a PodDisruptionBudget (minAvailable = workers + 1); {RETIRED}",
        )
