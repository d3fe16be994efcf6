"""One-shot mode: the master is a Job that waits for every worker, runs the command and stops.

A Job (restartPolicy Never, backoffLimit 0) rather than the master StatefulSet: the exit code stays in
the pod's termination message. A failed command starts again in the same pod, after its workers are
ready again, up to ``kompi:oneShot.restarts`` times; a disrupted pod is replaced (POD_FAILURE_POLICY).
``pulumi up`` does not wait for it (``pulumi.com/skipAwait``): a run may take hours, and its result is
the Job's status, not the deployment's. A changed Job spec (command,
image, worker count) replaces the Job, which runs again; an unchanged one never reruns.

With ``releaseWorkers`` the Job's pod, and only it, gets a token of a ServiceAccount whose Role can
get/patch/update the scale subresource of this cluster's worker StatefulSet and nothing else. It sets
the replicas to the worker count before it waits (a rerun after a release gets its workers back) and
to 0 after a successful command. Pulumi then ignores the worker StatefulSet's ``spec.replicas``
after creating it, so the next ``up`` neither scales released workers back up nor shows a diff.
"""

from __future__ import annotations

from kompi_components import contract
from kompi_components.config.schema import KompiConfig
from kompi_components.manifests import queue
from kompi_components.manifests.meta import SKIP_AWAIT, Manifest, ObjectOptions, manifest, metadata
from kompi_components.manifests.pod import Launch, master_resources, pod_template
from kompi_components.naming import Names

ENTRYPOINT = "kompi-oneshot"
ENV_WAIT_TIMEOUT = "KOMPI_WAIT_TIMEOUT"
ENV_RELEASE_WORKERS = "KOMPI_RELEASE_WORKERS"
ENV_RESTARTS = "KOMPI_RESTARTS"
# A pod that Kubernetes itself stops (scheduler preemption, eviction by a drain, a node's taint or loss) carries
# the condition DisruptionTarget; one that Kueue stops (its workload preempted or evicted: Kueue v0.17's pod
# integration sets TerminationTarget, then deletes the pod, which no DisruptionTarget marks) carries
# TerminationTarget. Such a pod is not the command's failure: the Job ignores it (it counts against neither
# backoffLimit nor kompi:oneShot.restarts) and makes a new pod, which waits for its workers (under Kueue, gated
# with them until the group is admitted again) and starts the command again from its checkpoint. Any other
# failed pod (the command's budget spent, the workers never ready, the pod deleted by a person) is final:
# backoffLimit stays 0, as the command's restarts are counted inside the pod, where the exit codes are. A pod
# failure policy needs restartPolicy Never (as here) and makes the Job wait until a failed pod has stopped
# before making the next one (podReplacementPolicy Failed), so two launchers never run at once.
STOPPED_BY_KUBERNETES = "DisruptionTarget"
STOPPED_BY_KUEUE = "TerminationTarget"
POD_FAILURE_POLICY = {
    "rules": [{"action": "Ignore", "onPodConditions": [{"type": STOPPED_BY_KUBERNETES}, {"type": STOPPED_BY_KUEUE}]}]
}
# Set on the worker StatefulSet whose replicas the Job owns (worker_options), for kubectl users to see;
# nothing reads it back.
IGNORE_REPLICAS = "kompi/ignore-replicas"


def releases(config: KompiConfig) -> bool:
    return config.one_shot.enabled and config.one_shot.release_workers


def launch(config: KompiConfig, names: Names) -> Launch:
    """The one-shot master's command: kompi-oneshot waits for the workers, runs the command and (with release)
    scales the workers to 0 after a success."""
    env = {
        contract.ENV_WORKERS: str(config.workers),
        ENV_WAIT_TIMEOUT: str(config.one_shot.timeout_seconds),
        ENV_RELEASE_WORKERS: "true" if config.one_shot.release_workers else "false",
        ENV_RESTARTS: str(config.one_shot.restarts),
    }
    account = names.oneshot_account if releases(config) else None
    return Launch([ENTRYPOINT], list(config.one_shot.command or []), env, account)


def job(config: KompiConfig, names: Names) -> Manifest:
    resources = master_resources(config)
    template = pod_template(config, names, "master", config.master_pod, resources, launch(config, names))
    meta = metadata(names, names.master, "master")
    meta["annotations"] = {SKIP_AWAIT: "true"} | queue.owner_annotations(config)
    return manifest(
        "batch/v1", "Job", meta, spec={"backoffLimit": 0, "podFailurePolicy": POD_FAILURE_POLICY, "template": template}
    )


# A Job's pod template cannot change: every new run is a new Job of the same name, so the old one goes first
# (also on `up --replace` of an unchanged Job, which would otherwise meet the old one's name).
JOB_OPTIONS = ObjectOptions(delete_before_replace=True)


def worker_options(config: KompiConfig) -> ObjectOptions:
    """With release, the Job's pod owns the worker count once the StatefulSet exists: Pulumi ignores it."""
    return ObjectOptions(ignore_changes=("spec.replicas",)) if releases(config) else ObjectOptions()


def release_rbac(config: KompiConfig, names: Names) -> list[Manifest]:
    """ServiceAccount, Role (the worker StatefulSet's scale subresource only), RoleBinding."""
    if not releases(config):
        return []
    name = names.oneshot_account
    account = manifest("v1", "ServiceAccount", metadata(names, name, "master"), automountServiceAccountToken=False)
    rule = {
        "apiGroups": ["apps"],
        "resources": ["statefulsets/scale"],
        "resourceNames": [names.workers],
        "verbs": ["get", "patch", "update"],
    }
    role = manifest("rbac.authorization.k8s.io/v1", "Role", metadata(names, name, "master"), rules=[rule])
    binding = manifest(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        metadata(names, name, "master"),
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        subjects=[{"kind": "ServiceAccount", "name": name, "namespace": names.namespace}],
    )
    return [account, role, binding]
