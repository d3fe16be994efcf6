"""After `kompi up`: wait until a job launched now would run, not just until Pulumi says done.

pulumi-kubernetes 4.25.0 (the provider the Go module proxy serves) can report a StatefulSet update done
before its rollout starts: it trusts a status the controller has not recomputed for the new generation
(fixed upstream in 4.26.0, pulumi/pulumi-kubernetes#4094). A key rotation then "succeeds" while the pods
still restart. And a rolled worker reaches the master's hostfile up to a discovery poll after it is Ready.
So `kompi up` checks both itself: the StatefulSets' rollouts, then the image's own `kompi-wait` in the
master (every worker in DNS, answering SSH, and in the hostfile).

If that does not happen in time, `up` fails naming each pod that is not Ready and why. A pod of the
previous template is named as such: kompi's StatefulSets are Parallel, whose controller replaces such a
pod whatever its state, except with the MaxUnavailableStatefulSet feature gate (beta, off by default
through Kubernetes 1.36), which counts it as unavailable and waits for it for ever; deleting it helps.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.engine.conditions import is_ready
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
        _finish_rollout(kubectl, names.namespace, statefulset, deadline, timeout)
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


def of_previous_template(statefulset: dict[str, Any], pod: dict[str, Any]) -> bool:
    """The pod was made from a template the StatefulSet no longer has (its controller labels each pod)."""
    update = statefulset.get("status", {}).get("updateRevision")
    return bool(update) and pod["metadata"].get("labels", {}).get(REVISION_LABEL) not in (None, update)


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
def _finish_rollout(kubectl: str, namespace: str, name: str, deadline: float, timeout: float) -> None:
    while True:
        statefulset = _json(kubectl, ["get", "statefulset", name, "-n", namespace], deadline)
        if rollout_complete(statefulset):
            return
        if time.monotonic() >= deadline:
            why = _why(kubectl, namespace, statefulset, deadline)
            raise JobReadinessError(f"StatefulSet {name} did not finish its rollout within {timeout:.0f} s ({why})")
        time.sleep(POLL_SECONDS)


def _why(kubectl: str, namespace: str, statefulset: dict[str, Any], deadline: float) -> str:
    selector = ",".join(f"{k}={v}" for k, v in statefulset["spec"]["selector"]["matchLabels"].items())
    pods = _json(kubectl, ["get", "pods", "-n", namespace, "-l", selector], deadline)["items"]
    waiting = [pod for pod in pods if not is_ready(pod)]
    if not waiting:
        return "every pod is Ready, but the controller has not finished the update"
    why = "; ".join(f"{pod['metadata']['name']}: {not_ready_reason(pod)}" for pod in waiting)
    stale = [pod["metadata"]["name"] for pod in waiting if of_previous_template(statefulset, pod)]
    if stale:
        why += f"; {', '.join(stale)} of the previous template: `kubectl delete pod` lets the StatefulSet recreate it"
    return why


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
