"""One-shot mode: the master is a Job that waits for every worker, runs the command once and stops.

A Job (restartPolicy Never, backoffLimit 0) rather than the master StatefulSet: nothing reruns a
finished or failed command against a stale hostfile, and the exit code stays in the pod's
termination message. ``pulumi up`` does not wait for it (``pulumi.com/skipAwait``): a run may take
hours, and its result is the Job's status, not the deployment's. A changed Job spec (command,
image, worker count) replaces the Job, which runs again; an unchanged one never reruns.

With ``releaseWorkers`` the Job's pod, and only it, gets a token of a ServiceAccount whose Role can
get/patch/update the scale subresource of this cluster's worker StatefulSet and nothing else. It sets
the replicas to the worker count before it waits (a rerun after a release gets its workers back) and
to 0 after a successful command. Pulumi then ignores the worker StatefulSet's ``spec.replicas``
after creating it, so the next ``up`` neither scales released workers back up nor shows a diff.
"""

from __future__ import annotations

from typing import Any

from kompi_components import contract
from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.meta import SKIP_AWAIT, Manifest, manifest, metadata
from kompi_components.manifests.pod import master_resources, pod_template
from kompi_components.naming import Names

ENTRYPOINT = "kompi-oneshot"
ENV_WAIT_TIMEOUT = "KOMPI_WAIT_TIMEOUT"
ENV_RELEASE_WORKERS = "KOMPI_RELEASE_WORKERS"
# Read by kompi_components.components when it creates the worker StatefulSet: ignore_changes on
# spec.replicas (the one-shot Job owns the replica count after creation).
IGNORE_REPLICAS = "kompi/ignore-replicas"


def releases(config: KompiConfig) -> bool:
    return config.one_shot.enabled and config.one_shot.release_workers


def _container(config: KompiConfig, template: dict[str, Any]) -> None:
    (container,) = template["spec"]["containers"]
    # No sshd on the one-shot master (it is not an MPI host), so no readiness probe and no port. On the host
    # network (where mpiexec needs it, for the workers' daemons to reach it) it claims no hostPort either: it may
    # share a node with a worker.
    for key in ("startupProbe", "readinessProbe", "ports"):
        container.pop(key, None)
    container["command"] = [ENTRYPOINT]
    container["args"] = list(config.one_shot.command or [])
    container["env"] += [
        {"name": contract.ENV_WORKERS, "value": str(config.workers)},
        {"name": ENV_WAIT_TIMEOUT, "value": str(config.one_shot.timeout_seconds)},
        {"name": ENV_RELEASE_WORKERS, "value": "true" if config.one_shot.release_workers else "false"},
    ]
    # The termination message is the exit code line kompi-oneshot writes (logs only if it could not).
    container["terminationMessagePolicy"] = "FallbackToLogsOnError"


def job(config: KompiConfig, names: Names) -> Manifest:
    template = pod_template(config, names, "master", config.master_pod, master_resources(config))
    _container(config, template)
    spec = template["spec"]
    spec["restartPolicy"] = "Never"
    if releases(config):
        spec["serviceAccountName"] = names.oneshot_account
        spec["automountServiceAccountToken"] = True
    meta = metadata(names, names.master, "master")
    meta["annotations"] = {SKIP_AWAIT: "true"}
    return manifest("batch/v1", "Job", meta, spec={"backoffLimit": 0, "template": template})


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


def mark_worker_replicas_ignored(config: KompiConfig, statefulset: Manifest) -> Manifest:
    if releases(config):
        statefulset["metadata"].setdefault("annotations", {})[IGNORE_REPLICAS] = "true"
    return statefulset


def replicas_ignored(item: Manifest) -> bool:
    annotations = item.get("metadata", {}).get("annotations") or {}
    return annotations.get(IGNORE_REPLICAS) == "true"
