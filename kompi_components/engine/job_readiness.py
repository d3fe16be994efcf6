"""After `kompi up`: wait until a job launched now would run, not just until Pulumi says done.

pulumi-kubernetes 4.25.0 (the provider the Go module proxy serves) can report a StatefulSet update done
before its rollout starts: it trusts a status the controller has not recomputed for the new generation
(fixed upstream in 4.26.0, pulumi/pulumi-kubernetes#4094). A key rotation then "succeeds" while the pods
still restart. And a rolled worker reaches the master's hostfile up to a discovery poll after it is Ready.
So `kompi up` checks both itself: `kubectl rollout status` of the StatefulSets, then the image's own
`kompi-wait` in the master (every worker in DNS, answering SSH, and in the hostfile).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.naming import cluster_names

TIMEOUT_SECONDS = 600  # pulumi-kubernetes' own default wait for a StatefulSet


class JobReadinessError(RuntimeError):
    """The cluster did not become ready for jobs in time; the message says which part and why."""


def wait_until_jobs_can_run(
    config: KompiConfig, kubectl: str, say: Callable[[str], None], timeout: float = TIMEOUT_SECONDS
) -> None:
    names = cluster_names(config)
    deadline = time.monotonic() + timeout
    statefulsets = [names.workers] if config.one_shot.enabled else [names.workers, names.master]
    for statefulset in statefulsets:
        _kubectl(
            kubectl,
            ["rollout", "status", f"statefulset/{statefulset}", "-n", names.namespace, f"--timeout={_left(deadline)}s"],
            f"StatefulSet {statefulset} did not finish its rollout",
            deadline,
        )
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


def _kubectl(kubectl: str, args: list[str], failure: str, deadline: float) -> None:
    result = subprocess.run([kubectl, *args], capture_output=True, text=True, timeout=_left(deadline) + 30, check=False)
    if result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise JobReadinessError(f"{failure}: {detail[0]}")
