"""While an operation runs: cancel it when the Kubernetes API server stops answering.

pulumi-kubernetes keeps retrying a lost API server until its readiness timeout (10 minutes for a
StatefulSet) and then reports a timeout that does not say why. kompi asks /readyz every few seconds
(kubectl, aimed at the provider's cluster) and, after ``lost_after`` seconds without an answer, cancels
the operation through the CLI - the state stays consistent - and says what happened.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kompi_engine.kubectl import Kubectl

DEFAULT_LOST_AFTER = 30.0


def lost_after_seconds() -> float:
    """``KOMPI_API_LOST_AFTER`` (seconds) overrides the default, e.g. for a slow VPN."""
    return float(os.environ.get("KOMPI_API_LOST_AFTER") or DEFAULT_LOST_AFTER)


class ApiWatch:
    def __init__(
        self,
        kubectl: Kubectl,
        on_lost: Callable[[], None],
        say: Callable[[str], None],
        interval: float = 5.0,
        lost_after: float = DEFAULT_LOST_AFTER,
    ) -> None:
        self.kubectl, self.on_lost, self.say = kubectl, on_lost, say
        self.interval, self.lost_after = interval, lost_after
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kompi-api-watch", daemon=True)

    def _answers(self) -> bool:
        try:
            request_timeout = f"--request-timeout={max(self.interval, 1):.0f}s"
            result = self.kubectl.run("get", "--raw", "/readyz", request_timeout, timeout=self.interval + 5)
        except (OSError, subprocess.SubprocessError):
            return False
        return result.returncode == 0

    def _run(self) -> None:
        silent_since: float | None = None
        while not self._stop.wait(self.interval):
            if self._answers():
                silent_since = None
                continue
            silent_since = silent_since or time.monotonic()
            if time.monotonic() - silent_since >= self.lost_after:
                self.lost = True
                self.say(f"the Kubernetes API server has not answered for {self.lost_after:.0f} s: cancelling")
                self.on_lost()
                return

    def __enter__(self) -> ApiWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 10)


@contextmanager
def watching_api(
    kubectl: Kubectl | None, on_lost: Callable[[], None], say: Callable[[str], None]
) -> Iterator[ApiWatch | None]:
    """An ApiWatch while the block runs, or None where there is no kubectl to ask with."""
    if kubectl is None:
        yield None
        return
    with ApiWatch(kubectl, on_lost, say, lost_after=lost_after_seconds()) as watch:
        yield watch
