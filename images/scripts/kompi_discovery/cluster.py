"""The cluster's workers and the hostfile: worker names from the environment, ordinals from DNS names, the
hostfile's text, and the file itself (written atomically, read back by kompi-wait)."""

from __future__ import annotations

import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .dns_client import SrvRecord


@dataclass(frozen=True)
class Cluster:
    service_domain: str  # <service>.<namespace>.svc.<cluster domain>
    worker_prefix: str  # worker pods are <prefix>-<ordinal>
    slots: int
    port_name: str = "ssh"
    # The master's own "<fqdn> slots=N" line when it is a compute node too (kompi:masterPod.compute).
    master_line: str = ""

    @classmethod
    def from_env(cls) -> Cluster:
        try:
            domain = os.environ["KOMPI_SERVICE_DOMAIN"].rstrip(".").lower()
            slots = int(os.environ.get("KOMPI_SLOTS_PER_WORKER", "1"))
            master_slots = int(os.environ.get("KOMPI_MASTER_SLOTS", "0"))
            # A StatefulSet pod's hostname is its pod name; its FQDN adds the service domain.
            master_line = f"{socket.gethostname()}.{domain} slots={master_slots}\n" if master_slots else ""
            return cls(domain, os.environ["KOMPI_WORKER_PREFIX"].lower(), slots, master_line=master_line)
        except KeyError as missing:
            raise SystemExit(f"{Path(sys.argv[0]).name}: environment variable {missing} is not set") from None

    @property
    def srv_name(self) -> str:
        return f"_{self.port_name}._tcp.{self.service_domain}"

    def fqdn(self, ordinal: int) -> str:
        return f"{self.worker_prefix}-{ordinal}.{self.service_domain}"

    def worker_ordinal(self, target: str) -> int | None:
        """The ordinal of a worker's FQDN, None for any other name (the master, other pods)."""
        pattern = rf"{re.escape(self.worker_prefix)}-(0|[1-9][0-9]*)\.{re.escape(self.service_domain)}"
        match = re.fullmatch(pattern, target.rstrip(".").lower())
        return int(match.group(1)) if match else None

    def ready_workers(self, records: Iterable[SrvRecord]) -> dict[int, SrvRecord]:
        """Ordinal -> record of the workers among ``records``."""
        workers = {}
        for record in records:
            ordinal = self.worker_ordinal(record.target)
            if ordinal is not None:
                workers[ordinal] = record
        return workers

    def hostfile_text(self, ordinals: Iterable[int]) -> str:
        """One ``<fqdn> slots=N`` line per worker, in numeric order (worker-2 before worker-10), after
        the master's own line when it computes too (so rank 0 runs on the master)."""
        workers = "".join(f"{self.fqdn(ordinal)} slots={self.slots}\n" for ordinal in sorted(set(ordinals)))
        return self.master_line + workers


def write_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never a part: temp file in the same dir, then rename.

    No fsync: the rename alone makes the swap atomic for readers, the file lives in an emptyDir that
    does not outlive the pod, and an fsync can stall for seconds while the node's disk is busy.
    """
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def hostfile_path() -> Path:
    return Path(os.environ.get("KOMPI_HOSTFILE", "/kompi/generated/hostfile"))


def hostfile_hosts(path: Path) -> set[str]:
    try:
        return {line.split()[0] for line in path.read_text().splitlines() if line.strip()}
    except FileNotFoundError:
        return set()
