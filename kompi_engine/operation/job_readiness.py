"""After `kompi up`: wait until a job launched now would run, not just until the pods are Ready.

The program itself waits until every pod of master and workers is Ready on the current template (its
StatefulSetRollout steps, so `pulumi up` does as well). A worker that has just become Ready reaches the
master's hostfile up to a discovery poll later, so `bin/kompi up` also runs the image's own `kompi-wait`
in the master (every worker in DNS, answering SSH, and in the hostfile) before it reports success.
Scripts that run a job right after `pulumi up` do the same: `kompi-wait N --timeout S && mpiexec ...`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.naming import cluster_names
from kompi_engine.kubectl import Kubectl

TIMEOUT_SECONDS = 600


class JobReadinessError(RuntimeError):
    """The cluster did not become ready for jobs in time; the message says which part and why."""


def wait_until_jobs_can_run(
    config: KompiConfig, kubectl: Kubectl, say: Callable[[str], None], timeout: float = TIMEOUT_SECONDS
) -> None:
    names = cluster_names(config)
    deadline = time.monotonic() + timeout
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


def _on_fake_node(kubectl: Kubectl, namespace: str, pod: str) -> bool:
    """kwok's nodes (kompi's local test cluster) run no container: there is nothing to exec into."""
    node = kubectl.run("get", "pod", pod, "-n", namespace, "-o", "jsonpath={.spec.nodeName}", timeout=60).stdout.strip()
    if not node:
        return False
    annotation = "jsonpath={.metadata.annotations.kwok\\.x-k8s\\.io/node}"
    return kubectl.run("get", "node", node, "-o", annotation, timeout=60).stdout.strip() == "fake"


def _left(deadline: float) -> int:
    return max(1, int(deadline - time.monotonic()))


def _kubectl(kubectl: Kubectl, args: list[str], failure: str, deadline: float) -> str:
    result = kubectl.run(*args, timeout=_left(deadline) + 30)
    if result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise JobReadinessError(f"{failure}: {detail[0]}")
    return result.stdout
