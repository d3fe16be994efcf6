"""A platform's own Kueue settings under which Kueue never makes the Workload of kompi's pod group: one line for
`up` to fail with, naming the setting to change.

- The one-shot Job taken by Kueue's Job integration. Kueue's Job webhook suspends a Job that names no queue
  when the platform sets ``manageJobsWithoutQueueName``, and labels it with the namespace's LocalQueue
  ``default`` where there is one (LocalQueueDefaulting, locked on since v0.17), and suspends it then too. The
  Job then waits to be admitted as a workload of its own (never, without a queue; or with the master's quota
  counted twice and a preemption of its own), and its pod, one member of the pod group, is not made meanwhile:
  the group never forms. A Job cannot opt out: Kueue v0.17 decides by its namespace
  (``managedJobsNamespaceSelector``) and its controller owner only, and kompi's Job carries neither label nor
  ``suspend``. So what took it shows on the Job as soon as it exists.
- Pods in a namespace outside ``managedJobsNamespaceSelector``. Kueue's pod webhook gates every pod that names a
  suspending parent (kompi's do) before it looks at the namespace, and with ManagedJobsNamespaceSelectorAlwaysRespected
  (beta, on by default since v0.15) its controller skips such a namespace: the pods stay gated for good, with no
  Workload. kompi cannot read Kueue's Configuration, so it fails once every member has waited at the gate with
  no Workload for the stuck-pod timeout (Kueue makes it within seconds of the last member).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kompi_components.manifests.queue import QUEUE_LABEL

DEFAULT_QUEUE = "default"  # the LocalQueue that Kueue gives every Job in its namespace that names none


def job_taken(job: Mapping[str, Any], members: int) -> str | None:
    """What made Kueue's Job integration take the one-shot ``job`` (kompi sets neither its queue label nor
    ``suspend``), as the line for `up`; None while it did not."""
    meta = job.get("metadata") or {}
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
    if queue == DEFAULT_QUEUE:
        setting = (
            f'the LocalQueue "{DEFAULT_QUEUE}" in namespace {namespace}, which Kueue gives every Job that names no '
            "queue (delete or rename it, or run in a namespace without one)"
        )
    elif queue is not None:
        setting = f"its label {QUEUE_LABEL}={queue}, set by someone else than kompi (remove it)"
    elif (job.get("spec") or {}).get("suspend"):
        setting = (
            "Kueue's manageJobsWithoutQueueName, which takes every Job that names no queue (a platform setting in "
            "Kueue's Configuration: turn it off)"
        )
    else:
        return None
    return (
        f"Kueue's Job integration took one-shot Job {namespace}/{name} and holds its pod back until it admits the Job "
        f"alone, so the pod group of {members} never forms: {setting}"
    )


def unmanaged_namespace(namespace: str, group: str, members: int, seconds: float) -> str:
    """The line for a pod group whose members all wait at Kueue's gate with no Workload after ``seconds``."""
    return (
        f"Kueue made no workload for pod group {group} in {seconds:.0f} s (kompi:stuckPodTimeoutSeconds) although "
        f"all its {members} pods exist and wait at its gate: namespace {namespace} is outside Kueue's "
        "managedJobsNamespaceSelector, whose pods Kueue gates but does not manage "
        "(ManagedJobsNamespaceSelectorAlwaysRespected, on by default since Kueue v0.15): label "
        f"{namespace} to match that selector (a platform setting in Kueue's Configuration), or run in a namespace "
        "that matches it; if it does, Kueue's controller is not running"
    )
