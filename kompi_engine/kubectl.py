"""The kubectl of kompi's own checks, aimed at the cluster that the stack's Kubernetes provider uses.

pulumi-kubernetes' default provider takes `kubernetes:kubeconfig` (a file's path or a kubeconfig's
YAML/JSON text), `kubernetes:context` and `kubernetes:cluster` from the stack config, and without a
kubeconfig there kubectl's own lookup ($KUBECONFIG, then ~/.kube/config). A kubectl on its current
context could wait on another cluster, and cancel `up` because that one does not answer; so every
call goes through one Kubectl made from those settings.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kompi_components.kube.access import kubeconfig_path

KUBECONFIG, CONTEXT, CLUSTER = "kubernetes:kubeconfig", "kubernetes:context", "kubernetes:cluster"
PROVIDER_KEYS = (KUBECONFIG, CONTEXT, CLUSTER)


@dataclass(frozen=True)
class Kubectl:
    binary: str
    kubeconfig: str | None = None  # None: kubectl's own lookup, as the provider's
    context: str | None = None
    cluster: str | None = None

    def command(self, *args: str) -> list[str]:
        chosen = {"--kubeconfig": self.kubeconfig, "--context": self.context, "--cluster": self.cluster}
        flags = [part for flag, value in chosen.items() if value for part in (flag, value)]
        return [self.binary, *flags, *args]

    def run(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout, check=False)

    def stdout(
        self, *args: str, input_text: str | None = None, check: bool = True, error: type[Exception] = RuntimeError
    ) -> str:
        """kubectl's output; with ``check``, a failure raises ``error`` with kubectl's own message."""
        result = subprocess.run(self.command(*args), input=input_text, capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise error(f"kubectl {' '.join(args[:3])}: {result.stderr.strip()}")
        return result.stdout


@contextmanager
def provider_kubectl(binary: str, settings: Mapping[str, str], base: Path) -> Iterator[Kubectl]:
    """A Kubectl for the provider ``settings`` (its PROVIDER_KEYS); a kubeconfig given as text is written to
    a file only this user can read, removed when the block ends."""
    context, cluster = settings.get(CONTEXT) or None, settings.get(CLUSTER) or None
    value = settings.get(KUBECONFIG) or ""
    if not value:
        yield Kubectl(binary, None, context, cluster)
        return
    path = kubeconfig_path(value, base)
    if path is not None:
        yield Kubectl(binary, str(path), context, cluster)
        return
    descriptor, name = tempfile.mkstemp(prefix="kompi-kubeconfig-")  # mode 0600
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(value)
        yield Kubectl(binary, name, context, cluster)
    finally:
        os.unlink(name)
