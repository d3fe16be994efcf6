"""After `kompi up`: wait until a job launched now would run, not just until Pulumi says done.

pulumi-kubernetes 4.25.0 (the provider the Go module proxy serves) can report a StatefulSet update done
before its rollout starts: it trusts a status the controller has not recomputed for the new generation
(fixed upstream in 4.26.0, pulumi/pulumi-kubernetes#4094). A key rotation then "succeeds" while the pods
still restart. And a rolled worker reaches the master's hostfile up to a discovery poll after it is Ready.
So `kompi up` checks both itself: the StatefulSets' rollouts, then the image's own `kompi-wait` in the
master (every worker in DNS, answering SSH, and in the hostfile).

A StatefulSet never replaces a pod of its previous template that is not Ready: a master that could not
be scheduled under a bad config stays Pending once the config is fixed, and the rollout waits for ever.
Kubernetes documents deleting such pods by hand (the step after a "forced rollback"); kompi does it, once
per pod, so that the controller recreates them from the new template.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.naming import cluster_names

TIMEOUT_SECONDS = 600  # pulumi-kubernetes' own default wait for a StatefulSet
POLL_SECONDS = 1.0
REVISION_LABEL = "controller-revision-hash"  # set by the StatefulSet controller on each of its pods


class JobReadinessError(RuntimeError):
    """The cluster did not become ready for jobs in time; the message says which part and why."""


def wait_until_jobs_can_run(
    config: KompiConfig, kubectl: str, say: Callable[[str], None], timeout: float = TIMEOUT_SECONDS
) -> None:
    names = cluster_names(config)
    deadline = time.monotonic() + timeout
    statefulsets = [names.workers] if config.one_shot.enabled else [names.workers, names.master]
    for statefulset in statefulsets:
        _finish_rollout(kubectl, names.namespace, statefulset, deadline, timeout, say)
    if config.one_shot.enabled or config.workers == 0:
        return
    if _on_fake_node(kubectl, names.namespace, names.master_pod):
        say(f"{names.master_pod} runs on a kwok node (no container): not asking it for its hostfile")
        return
    started = time.monotonic()
    in_master = ["exec", "-n", names.namespace, names.master_pod, "-c", MPI_CONTAINER, "--"]
    _kubectl(
        kubectl,
        [*in_master, "kompi-wait", str(config.workers), "--timeout", str(_left(deadline))],
        f"the master {names.master_pod} does not list all {config.workers} workers",
        deadline,
    )
    say(f"every worker is in the master's hostfile ({time.monotonic() - started:.1f} s after the rollouts)")


# -- decisions on what the API server returned (pure, so each case is testable without a cluster)
def rollout_complete(statefulset: dict[str, Any]) -> bool:
    """What `kubectl rollout status` waits for: this generation observed, every replica Ready, and the
    update revision the current one."""
    status = statefulset.get("status", {})
    observed = status.get("observedGeneration", 0)
    return bool(
        observed > 0
        and observed >= statefulset["metadata"].get("generation", 0)
        and status.get("readyReplicas", 0) >= statefulset["spec"].get("replicas", 1)
        and status.get("updateRevision") == status.get("currentRevision")
    )


def blocking_pods(statefulset: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods of a previous revision that are not Ready: the controller waits for them and never replaces them."""
    update = statefulset.get("status", {}).get("updateRevision")
    if not update:
        return []
    return [
        pod
        for pod in pods
        if pod["metadata"].get("labels", {}).get(REVISION_LABEL) not in (None, update)
        and "deletionTimestamp" not in pod["metadata"]
        and not is_ready(pod)
    ]


def is_ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))


def not_ready_reason(pod: dict[str, Any]) -> str:
    """The most specific reason a pod is not Ready: the scheduler's verdict, a container's waiting reason."""
    status = pod.get("status", {})
    for condition in status.get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return f"{condition.get('reason', 'Unschedulable')}: {condition.get('message', '')}".rstrip(": ")
    for container in status.get("initContainerStatuses", []) + status.get("containerStatuses", []):
        waiting = container.get("state", {}).get("waiting")
        if waiting:
            return f"{container['name']} {waiting.get('reason', 'waiting')}: {waiting.get('message', '')}".rstrip(": ")
    return f"{status.get('phase', 'Unknown')}, not Ready"


# -- talking to the cluster
def _finish_rollout(
    kubectl: str, namespace: str, name: str, deadline: float, timeout: float, say: Callable[[str], None]
) -> None:
    replaced: set[str] = set()  # pod uids: each blocking pod is deleted once; its successor is a new pod
    while True:
        statefulset = _json(kubectl, ["get", "statefulset", name, "-n", namespace], deadline)
        if rollout_complete(statefulset):
            return
        selector = ",".join(f"{k}={v}" for k, v in statefulset["spec"]["selector"]["matchLabels"].items())
        pods = _json(kubectl, ["get", "pods", "-n", namespace, "-l", selector], deadline)["items"]
        for pod in blocking_pods(statefulset, pods):
            if pod["metadata"]["uid"] not in replaced:
                pod_name = pod["metadata"]["name"]
                say(f"replacing {pod_name}: it runs the previous template and is not Ready ({not_ready_reason(pod)})")
                _kubectl(
                    kubectl,
                    ["delete", "pod", pod_name, "-n", namespace, "--wait=false"],
                    f"could not replace {pod_name}",
                    deadline,
                )
                replaced.add(pod["metadata"]["uid"])
        if time.monotonic() >= deadline:
            waiting = [f"{p['metadata']['name']}: {not_ready_reason(p)}" for p in pods if not is_ready(p)]
            why = "; ".join(waiting) or "every pod is Ready, but the controller has not finished the update"
            raise JobReadinessError(f"StatefulSet {name} did not finish its rollout within {timeout:.0f} s ({why})")
        time.sleep(POLL_SECONDS)


def _on_fake_node(kubectl: str, namespace: str, pod: str) -> bool:
    """kwok's nodes (kompi's local test cluster) run no container: there is nothing to exec into."""
    node = subprocess.run(
        [kubectl, "get", "pod", pod, "-n", namespace, "-o", "jsonpath={.spec.nodeName}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout.strip()
    if not node:
        return False
    fake = subprocess.run(
        [kubectl, "get", "node", node, "-o", "jsonpath={.metadata.annotations.kwok\\.x-k8s\\.io/node}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout.strip()
    return fake == "fake"


def _left(deadline: float) -> int:
    return max(1, int(deadline - time.monotonic()))


def _kubectl(kubectl: str, args: list[str], failure: str, deadline: float) -> str:
    result = subprocess.run([kubectl, *args], capture_output=True, text=True, timeout=_left(deadline) + 30, check=False)
    if result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise JobReadinessError(f"{failure}: {detail[0]}")
    return result.stdout


def _json(kubectl: str, args: list[str], deadline: float) -> dict[str, Any]:
    what = " ".join(args[1:3])
    return dict(json.loads(_kubectl(kubectl, [*args, "-o", "json"], f"could not read {what}", deadline)))
