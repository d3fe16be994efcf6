"""What Kueue says of a cluster whose pods wait at its admission gate: one line for `up` to print."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kompi_components.kube.api import UNREADABLE
from kompi_components.manifests.queue import ADMISSION_GATE, GROUP_LABEL, QUEUE_LABEL


def gated(pod: Mapping[str, Any]) -> bool:
    """The pod waits for Kueue to admit its group (the scheduler does not look at it until then)."""
    return any(gate.get("name") == ADMISSION_GATE for gate in pod.get("spec", {}).get("schedulingGates") or [])


def group_of(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """(queue, pod group) of a queued pod, else None."""
    labels = pod.get("metadata", {}).get("labels") or {}
    if QUEUE_LABEL not in labels or GROUP_LABEL not in labels:
        return None
    return str(labels[QUEUE_LABEL]), str(labels[GROUP_LABEL])


def _condition(workload: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    conditions = (workload.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), None)


# Kueue's flavor assigner says this of a pod set that no flavor could ever hold (the ClusterQueue's quota and
# what its cohort may lend), as against "insufficient unused quota", which a wait or a preemption may mend.
NEVER_FITS = "> maximum capacity"
WAITING_MAY_FIT = "insufficient unused quota"


def finished(workload: Mapping[str, Any]) -> bool:
    """Kueue has ended the workload (its pods succeeded, failed, or could not start): it admits no pod into it."""
    found = _condition(workload, "Finished")
    return bool(found and found.get("status") == "True")


def never_admitted(workload: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """What Kueue will not do for the workload's pods, as it is, however long they wait, with Kueue's own words:
    start them, once it is Finished (its pods stay gated for good: FailedToStart, for one, where the admitted
    flavor's node labels conflict with the pods' nodeSelector), or admit them, where their request exceeds what
    every flavor could ever hold. None otherwise."""
    if workload is None:
        return None
    finished = _condition(workload, "Finished")
    if finished and finished.get("status") == "True":
        name = (workload.get("metadata") or {}).get("name", "")
        said = f"its workload {name} is Finished ({finished.get('reason')}): {finished.get('message', '')}"
        return "start", said.rstrip(": ")
    reserved = _condition(workload, "QuotaReserved")
    message = str(reserved.get("message") or "") if reserved and reserved.get("status") == "False" else ""
    if NEVER_FITS in message and WAITING_MAY_FIT not in message:
        return "admit", (
            "more than its queue can ever hold (ask for less: kompi:workers, kompi:gpusPerWorker, the pods' "
            f"resources; or give its ClusterQueue more quota): {message}"
        )
    return None


def queue_state(queue: str, workload: Mapping[str, Any] | None, members: int) -> str:
    """Where the cluster's workload stands in ``queue``, with Kueue's own reason: `up` prints it when it
    changes, and names it when the queue wait runs out."""
    where = f"queue {queue}"
    if workload is UNREADABLE:
        return (
            f"{where}: its {members} pods wait for Kueue, which says why in their Workload, and this identity may not "
            f"read Workloads here (403: grant get on workloads.kueue.x-k8s.io)"
        )
    if workload is None:
        return f"{where}: waiting for Kueue to make the workload of its {members} pods (is Kueue running?)"
    evicted = _condition(workload, "Evicted")
    reserved = _condition(workload, "QuotaReserved")
    waits_for = reserved.get("message") if reserved and reserved.get("status") == "False" else None
    if evicted and evicted.get("status") == "True":
        # Kueue keeps Evicted true until it reserves quota again; once its scheduler has tried the requeued
        # workload, the QuotaReserved message (no longer the eviction's own) is the reason it waits now.
        if waits_for and waits_for != evicted.get("message"):
            return f"{where}: queued: {waits_for} (after eviction: {evicted.get('reason')})"
        return f"{where}: evicted ({evicted.get('reason')}): {evicted.get('message', '')}".rstrip(": ")
    admitted = _condition(workload, "Admitted")
    if admitted and admitted.get("status") == "True":
        return f"{where}: admitted, {members} pods"
    if waits_for:
        return f"{where}: queued: {waits_for}"
    if reserved and reserved.get("status") == "True":
        return f"{where}: quota reserved, waiting for admission checks"
    return f"{where}: queued, not yet considered by Kueue"
