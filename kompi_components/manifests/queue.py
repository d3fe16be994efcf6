"""Kueue admission: master, workers (and the one-shot Job's pod) as one pod group, admitted all or nothing.

Kueue's StatefulSet integration admits one StatefulSet as one workload and overwrites the group label a
template carries, so it cannot join the master's StatefulSet to the workers'. A plain pod group can: every
pod of the cluster carries the same group name and member count, Kueue's pod webhook gates each pod until
the group is admitted, and the group's Workload has one pod set per role. The StatefulSets themselves carry
no queue label, so Kueue's StatefulSet and Job integrations leave them to the pod integration.

Each pod also names kompi as the parent that suspends it (`pod-suspending-parent`), as Kueue's own
StatefulSet and LeaderWorkerSet integrations name themselves. Kueue (v0.16 on) then puts no finalizer on
the pod, so a pod that Kueue or a rolling update deletes goes, and its StatefulSet makes it again, gated
until the group is admitted: a preempted cluster comes back by itself once the quota is free. A parent
other than `statefulset` also keeps Kueue's StatefulSet webhook off kompi's StatefulSets (even with
`manageJobsWithoutQueueName`) and skips its default-LocalQueue defaulting; since Kueue's pod webhook then
leaves the `managed` label to the parent, kompi sets it.
"""

from __future__ import annotations

import hashlib
import json

from kompi_components.config.schema import KompiConfig, PodSettings
from kompi_components.manifests import app_code
from kompi_components.manifests.meta import DELETION_PROPAGATION
from kompi_components.naming import Names

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
TOTAL_COUNT_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
# Kueue makes one pod set per role; left to it, the role is a hash of each pod's spec.
ROLE_ANNOTATION = "kueue.x-k8s.io/role-hash"
# A serving group's pods may be replaced (a StatefulSet recreates a pod) without ending the workload.
SERVING_ANNOTATION = "kueue.x-k8s.io/pod-group-serving"
# A one-shot group instead ends, and gives its quota back, once none of its pods runs and a pod that stopped
# says so (retriable: false): the launcher's, the one pod left when a run released its workers.
RETRIABLE_ANNOTATION = "kueue.x-k8s.io/retriable-in-group"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
PARENT_ANNOTATION = "kueue.x-k8s.io/pod-suspending-parent"
PARENT = "kompi"


def members(config: KompiConfig) -> int:
    """Master and workers: the master is admitted with its workers, never alone."""
    return config.workers + 1


def group_name(config: KompiConfig, names: Names) -> str:
    """The pod group, and so the Workload's name. It changes with what Kueue admits on (member count, each
    role's resources and placement, queue, priority), so a resized or moved cluster is a new workload that Kueue
    admits for its new size, to the flavor its new placement fits; an image or key change keeps the group and
    Kueue admits the replaced pods in it. A one-shot run's group changes with any change of its pods (a new
    run): Kueue admits no new pod into a group whose Workload is Finished, as a run's is once it succeeded."""
    admitted: dict[str, object] = {
        "members": members(config),
        "gpus": config.gpus_per_worker,
        "master": config.master_pod.resources,
        "masterComputes": config.master_pod.compute,
        "worker": config.worker_pod.resources,
        "queue": config.queue,
        "priority": config.queue_priority_class,
    }
    # Only where set: a cluster that sets no placement keeps the group name that it had before placement counted.
    if placement := _placement(config):
        admitted["placement"] = placement
    if config.one_shot.enabled:
        admitted["run"] = _run(config, names)
    digest = hashlib.sha256(json.dumps(admitted, sort_keys=True).encode()).hexdigest()
    return f"{names.cluster}-{digest[:10]}"


# Kueue's own annotations on a pod (its topology request: kueue.x-k8s.io/podset-required-topology, ...).
KUEUE_PREFIX = "kueue.x-k8s.io/"


def _placement(config: KompiConfig) -> dict[str, dict[str, object]]:
    """Each role's pod fields, other than its resources, that Kueue admits a pod set on (v0.17: the fields of its
    pod role hash and its topology annotations). Its flavor assigner picks the flavor whose node labels the
    nodeSelector and required node affinity match and whose taints the tolerations tolerate; once admitted, a
    replaced pod only gets that flavor's node labels merged in (a conflicting nodeSelector ends the Workload
    Finished, FailedToStart). kompi sets none of the others (priorityClassName, runtimeClassName, overhead,
    topologySpreadConstraints, resourceClaims); its init containers' requests count in the pod's."""
    placement: dict[str, dict[str, object]] = {}
    init_requests = [app_code.init_container(config, app)["resources"].get("requests") for app in config.app_code]
    roles: tuple[tuple[str, PodSettings], ...] = (("master", config.master_pod), ("worker", config.worker_pod))
    for role, settings in roles:
        fields: dict[str, object] = {
            "nodeSelector": settings.node_selector,
            "tolerations": settings.tolerations,
            "affinity": settings.affinity,
            "kueueAnnotations": {
                key: value for key, value in settings.annotations.items() if key.startswith(KUEUE_PREFIX)
            },
            # a required pod anti-affinity added to the workers' affinity (statefulsets.one_per_node)
            "onePerNode": role == "worker" and config.one_worker_per_node,
            "initRequests": init_requests,
        }
        if found := {key: value for key, value in fields.items() if value}:
            placement[role] = found
    return placement


def _run(config: KompiConfig, names: Names) -> list[object]:
    """What a one-shot run's pods are made of: the spec of its Job and of the workers' StatefulSet, as they are
    without Kueue. Not their metadata, whose kompi version label changes with every kompi release: an upgrade
    that renders the same pods is no new run. Rendered rather than read from the config: Pulumi replaces the Job
    whenever its pod template changes, a kompi upgrade's change included, and the new Job's pod must then be in a
    new group (in the Finished one it would wait gated for good)."""
    # Imported here: both modules build their pod templates with this module's group_metadata.
    from kompi_components.manifests.oneshot import job
    from kompi_components.manifests.statefulsets import workers

    unqueued = config.model_copy(update={"queue": None})
    return [job(unqueued, names)["spec"], workers(unqueued, names)["spec"]]


def owner_annotations(config: KompiConfig) -> dict[str, str]:
    """Annotations of the pods' owners (StatefulSets, the one-shot Job): with kompi:queue, Pulumi deletes them
    without waiting for their pods, which an older Kueue's finalizer holds until the cluster's QueueRelease
    deletes the group's Workload (kompi_components/components/queue_release.py)."""
    return {DELETION_PROPAGATION: "background"} if config.queue else {}


def queue_labels(config: KompiConfig) -> dict[str, str]:
    """The labels that put a pod in the stack's queue (the data-preparation Job's pod is a workload alone)."""
    if config.queue is None:
        return {}
    labels = {QUEUE_LABEL: config.queue}
    if config.queue_priority_class is not None:
        labels[PRIORITY_LABEL] = config.queue_priority_class
    return labels


def group_metadata(config: KompiConfig, names: Names, role: str) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and annotations of a cluster pod's template: none without kompi:queue."""
    if config.queue is None:
        return {}, {}
    labels = queue_labels(config) | {GROUP_LABEL: group_name(config, names), MANAGED_LABEL: "true"}
    annotations = {
        TOTAL_COUNT_ANNOTATION: str(members(config)),
        ROLE_ANNOTATION: role,
        PARENT_ANNOTATION: PARENT,
    }
    # A cluster serves until it is destroyed. A one-shot run ends: when its Job has succeeded and released the
    # workers, no pod of the group runs, Kueue marks the workload Finished and its quota is free for others. Only
    # the launcher says so: Kueue (v0.17) ends such a group whenever every pod it lists has stopped, also in
    # the moment of a preemption when the old pods are gone and their replacements not yet made; marked
    # workers, which stop at once, could end it with the launcher already gone, and a Finished group keeps its
    # replacements gated for good. The workers' StatefulSet and the Job make them again, into the same group.
    if not config.one_shot.enabled:
        lifetime = {SERVING_ANNOTATION: "true"}
    else:
        lifetime = {RETRIABLE_ANNOTATION: "false"} if role == "master" else {}
    return labels, annotations | lifetime
