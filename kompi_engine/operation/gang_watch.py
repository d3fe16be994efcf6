"""While `kompi up` waits for a gang: the scheduler's reason, printed as it changes.

Pulumi's wait for the StatefulSets shows only "0/3 Pods ready"; the reason a gang is not placed (it does
not fit, or no scheduler answers to its schedulerName) is on the pods. kubectl reads them, on the
cluster the Kubernetes provider uses; without kubectl there is no watch, and `up` is unchanged.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.naming import cluster_names
from kompi_engine.kubectl import Kubectl

NO_SCHEDULER_AFTER = 3  # checks with no scheduling condition on any member before saying no scheduler answers


def _scheduling(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in pod.get("status", {}).get("conditions", []):
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def gang_state(pods: list[dict[str, Any]], scheduler: str, unanswered_checks: int) -> str | None:
    """One line on why the gang is not placed, or None while nothing is wrong (or it is too early to say)."""
    waiting = [pod for pod in pods if not pod.get("spec", {}).get("nodeName")]
    if not waiting:
        return None
    conditions = [_scheduling(pod) for pod in waiting]
    reasons = Counter(c.get("message", "") for c in conditions if c and c.get("status") == "False")
    if reasons:
        reason = reasons.most_common(1)[0][0]
        return f"{len(waiting)} of {len(pods)} gang pods not placed by {scheduler}: {reason}"
    if all(c is None for c in conditions) and unanswered_checks >= NO_SCHEDULER_AFTER:
        return (
            f"{len(waiting)} gang pods wait for a scheduler named {scheduler} and none has answered: "
            "is it installed? (see kompi:gangScheduling.mode in README, 'Gang scheduling')"
        )
    return None


class GangWatch:
    """Polls the gang's pods every ``interval`` seconds and says a new reason once."""

    def __init__(
        self, config: KompiConfig, kubectl: Kubectl, say: Callable[[str], None], interval: float = 10.0
    ) -> None:
        names = cluster_names(config)
        self.namespace = names.namespace
        self.selector = ",".join(f"{key}={value}" for key, value in names.selector().items())
        self.scheduler = config.gang_scheduling.scheduler
        self.kubectl, self.say, self.interval = kubectl, say, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kompi-gang-watch", daemon=True)

    def _pods(self) -> list[dict[str, Any]]:
        result = self.kubectl.run("get", "pods", "-n", self.namespace, "-l", self.selector, "-o", "json", timeout=30)
        return list(json.loads(result.stdout).get("items", [])) if result.returncode == 0 else []

    def _run(self) -> None:
        said, unanswered = None, 0
        while not self._stop.wait(self.interval):
            try:
                pods = self._pods()
            except (OSError, subprocess.SubprocessError, ValueError):
                continue  # the watch only informs; `up` goes on regardless
            unanswered = unanswered + 1 if pods and all(_scheduling(p) is None for p in pods) else 0
            line = gang_state(pods, self.scheduler, unanswered)
            if line and line != said:
                self.say(f"gang {self.namespace}: {line}")
            said = line

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@contextmanager
def watching_gang(config: KompiConfig, kubectl: Kubectl | None, say: Callable[[str], None]) -> Iterator[None]:
    """Watch during the block when the stack gangs its pods and kubectl is at hand."""
    if not config.gang_scheduling.enabled or kubectl is None:
        yield
        return
    watch = GangWatch(config, kubectl, say)
    watch.start()
    try:
        yield
    finally:
        watch.stop()
