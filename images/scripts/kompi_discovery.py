#!/usr/bin/python3
"""kompi's worker discovery from cluster DNS alone (no Kubernetes API, no credentials).

Installed as three commands (the program looks at the name it was called by):
  kompi-discover [watch]       keep $KOMPI_HOSTFILE equal to the ready workers (poll every ~1 s)
  kompi-discover once          print the hostfile the ready workers give, once
  kompi-discover scale N       set the worker StatefulSet's replicas (one-shot mode: the pod's own
                               service account may patch that one scale subresource, nothing else)
  kompi-wait N [--timeout S]   block until workers 0..N-1 are in DNS, answer with an SSH banner and
                               are in the hostfile; exit 1 naming the missing ones after S seconds

Ready workers come from the SRV records of the headless Service's named port,
_ssh._tcp.<service domain>: Kubernetes DNS publishes one per ready endpoint, target = the pod's
<hostname>.<service domain>. Only the Python standard library is used (a minimal DNS client).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import ssl
import struct
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SRV = 33
OPT = 41
CLASS_IN = 1
RCODE_NXDOMAIN = 3
EDNS_PAYLOAD = 4096
QUERY_TIMEOUT = 0.5
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class DnsError(RuntimeError):
    """No usable answer (timeout, server failure): the caller keeps what it knew before."""


@dataclass(frozen=True, order=True)
class SrvRecord:
    priority: int
    weight: int
    port: int
    target: str  # lower case, no trailing dot


def log(message: str) -> None:
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr, flush=True)


# --- DNS wire format (RFC 1035, RFC 2782 SRV, RFC 6891 EDNS0) ----------------------------------


def encode_name(name: str) -> bytes:
    out = b""
    for label in name.rstrip(".").split("."):
        raw = label.encode("ascii")
        if not 0 < len(raw) < 64:
            raise ValueError(f"bad DNS name {name!r}")
        out += bytes([len(raw)]) + raw
    return out + b"\0"


def build_query(name: str, qtype: int, query_id: int) -> bytes:
    header = struct.pack("!HHHHHH", query_id, 0x0100, 1, 0, 0, 1)  # RD; one question, one OPT
    question = encode_name(name) + struct.pack("!HH", qtype, CLASS_IN)
    opt = b"\0" + struct.pack("!HHIH", OPT, EDNS_PAYLOAD, 0, 0)
    return header + question + opt


def read_name(message: bytes, offset: int) -> tuple[str, int]:
    """The (possibly compressed) name at ``offset``; returns it and the offset just after it."""
    labels: list[str] = []
    end = None
    for _ in range(128):  # bounds compression loops
        length = message[offset]
        if length & 0xC0 == 0xC0:
            pointer = struct.unpack_from("!H", message, offset)[0] & 0x3FFF
            end = offset + 2 if end is None else end
            offset = pointer
            continue
        if length == 0:
            return ".".join(labels).lower(), offset + 1 if end is None else end
        labels.append(message[offset + 1 : offset + 1 + length].decode("ascii", "replace"))
        offset += 1 + length
    raise ValueError("DNS name compression loop")


def parse_srv_response(message: bytes, query_id: int) -> tuple[int, bool, list[SrvRecord]]:
    """(rcode, truncated, SRV answers) of a response to query ``query_id``."""
    if len(message) < 12:
        raise ValueError("short DNS message")
    ident, flags, qdcount, ancount = struct.unpack_from("!HHHH", message)
    if ident != query_id or not flags & 0x8000:
        raise ValueError("not the response to this query")
    offset = 12
    for _ in range(qdcount):
        offset = read_name(message, offset)[1] + 4
    records = []
    for _ in range(ancount):
        offset = read_name(message, offset)[1]
        rtype, _rclass, _ttl, length = struct.unpack_from("!HHIH", message, offset)
        offset += 10
        if rtype == SRV:
            priority, weight, port = struct.unpack_from("!HHH", message, offset)
            records.append(SrvRecord(priority, weight, port, read_name(message, offset + 6)[0]))
        offset += length
    return flags & 0x000F, bool(flags & 0x0200), records


def nameservers(resolv_conf: str = "/etc/resolv.conf") -> list[str]:
    servers = []
    for line in Path(resolv_conf).read_text().splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            servers.append(fields[1])
    return servers or ["127.0.0.1"]


def _ask_udp(server: str, query: bytes, timeout: float) -> bytes:
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(query, (server, 53))
        return sock.recv(65535)


def _ask_tcp(server: str, query: bytes, timeout: float) -> bytes:
    with socket.create_connection((server, 53), timeout=timeout) as sock:
        sock.sendall(struct.pack("!H", len(query)) + query)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack_from("!H", data)[0]:
            chunk = sock.recv(65535)
            if not chunk:
                raise OSError("connection closed")
            data += chunk
        return data[2:]


def query_srv(name: str, servers: Sequence[str] | None = None, timeout: float = QUERY_TIMEOUT) -> list[SrvRecord]:
    """SRV records of ``name``; [] when the name does not exist (no ready endpoint)."""
    problems = []
    for server in servers or nameservers():
        query_id = random.randrange(1 << 16)
        query = build_query(name, SRV, query_id)
        try:
            rcode, truncated, records = parse_srv_response(_ask_udp(server, query, timeout), query_id)
            if truncated:
                rcode, truncated, records = parse_srv_response(_ask_tcp(server, query, timeout), query_id)
        except (OSError, ValueError, struct.error, IndexError) as error:
            problems.append(f"{server}: {error or type(error).__name__}")
            continue
        if rcode == 0:
            return records
        if rcode == RCODE_NXDOMAIN:
            return []
        problems.append(f"{server}: rcode {rcode}")
    raise DnsError(f"no answer for {name} ({'; '.join(problems)})")


# --- the cluster's workers and the hostfile ---------------------------------------------------


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

    def discover(self) -> dict[int, SrvRecord]:
        return self.ready_workers(query_srv(self.srv_name))


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


def watch(cluster: Cluster, hostfile: Path, interval: float) -> None:
    """Rewrite the hostfile whenever the set of ready workers changes; runs until SIGTERM."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    current: str | None = None
    failing = False
    log(f"watching {cluster.srv_name} every {interval:g}s for {cluster.worker_prefix}-N into {hostfile}")
    while True:
        started = time.monotonic()
        try:
            text = cluster.hostfile_text(cluster.discover())
            if failing:
                log("DNS answers again")
            failing = False
        except DnsError as error:
            if not failing:
                log(f"keeping the hostfile: {error}")
            failing = True
            text = current
        if text is not None and text != current:
            write_atomically(hostfile, text)
            log(f"hostfile: {text.count(chr(10))} workers")
            current = text
        # After a failed query, ask again soon rather than a whole period later.
        pause = min(interval, 0.2) if failing else interval
        time.sleep(max(0.0, pause - (time.monotonic() - started)))


def ssh_banner(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(256).startswith(b"SSH-")
    except OSError:
        return False


def hostfile_hosts(path: Path) -> set[str]:
    try:
        return {line.split()[0] for line in path.read_text().splitlines() if line.strip()}
    except FileNotFoundError:
        return set()


def wait(cluster: Cluster, count: int, timeout: float, hostfile: Path | None, poll: float = 0.2) -> int:
    """0 once workers 0..count-1 are ready (DNS, SSH banner, hostfile); 1 naming the missing ones."""
    deadline = time.monotonic() + timeout
    missing: dict[int, str] = {}
    while True:
        try:
            ready = cluster.discover()
            listed = hostfile_hosts(hostfile) if hostfile else None
            missing = {}
            for ordinal in range(count):
                if ordinal not in ready:
                    missing[ordinal] = "not ready in DNS"
                elif not ssh_banner(ready[ordinal].target, ready[ordinal].port):
                    missing[ordinal] = "sshd does not answer"
                elif listed is not None and cluster.fqdn(ordinal) not in listed:
                    missing[ordinal] = f"not in {hostfile} yet"
        except DnsError as error:
            missing = {ordinal: str(error) for ordinal in range(count)}
        if not missing:
            log(f"{count} workers ready")
            return 0
        if time.monotonic() >= deadline:
            names = ", ".join(f"{cluster.worker_prefix}-{o} ({why})" for o, why in sorted(missing.items()))
            log(f"timed out after {timeout:g}s waiting for {count} workers; missing: {names}")
            return 1
        time.sleep(max(0.0, min(poll, deadline - time.monotonic())))


# --- the one Kubernetes API call of one-shot mode --------------------------------------------


def scale(replicas: int, statefulset: str) -> None:
    """PATCH the StatefulSet's scale subresource with the pod's own token (RBAC: that one object)."""
    sa_dir = Path(os.environ.get("KOMPI_SA_DIR", SA_DIR))
    token = (sa_dir / "token").read_text().strip()
    namespace = (sa_dir / "namespace").read_text().strip()
    api = os.environ.get("KOMPI_KUBE_API") or (
        f"https://{os.environ['KUBERNETES_SERVICE_HOST']}:{os.environ.get('KUBERNETES_SERVICE_PORT', '443')}"
    )
    url = f"{api.rstrip('/')}/apis/apps/v1/namespaces/{namespace}/statefulsets/{statefulset}/scale"
    body = json.dumps({"spec": {"replicas": replicas}}).encode()
    request = urllib.request.Request(url, data=body, method="PATCH")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/merge-patch+json")
    request.add_header("Accept", "application/json")
    context = ssl.create_default_context(cafile=str(sa_dir / "ca.crt")) if url.startswith("https:") else None
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        reply = json.loads(response.read() or b"{}")
    log(f"{statefulset}: replicas {reply.get('spec', {}).get('replicas', replicas)}")


# --- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str]) -> int:
    program = Path(argv[0]).name
    args = list(argv[1:])
    if program == "kompi-wait":
        args = ["wait", *args]
    parser = argparse.ArgumentParser(prog=program, description="kompi worker discovery from cluster DNS")
    commands = parser.add_subparsers(dest="command")
    watch_cmd = commands.add_parser("watch", help="keep the hostfile equal to the ready workers")
    watch_cmd.add_argument("--interval", type=float, default=float(os.environ.get("KOMPI_DISCOVERY_INTERVAL", "1")))
    commands.add_parser("once", help="print the hostfile of the workers ready now")
    wait_cmd = commands.add_parser("wait", help="wait for workers 0..N-1")
    wait_cmd.add_argument("workers", type=int)
    wait_cmd.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")
    wait_cmd.add_argument("--no-hostfile", action="store_true", help="do not require them in the hostfile")
    scale_cmd = commands.add_parser("scale", help="set the worker StatefulSet's replicas")
    scale_cmd.add_argument("replicas", type=int)
    options = parser.parse_args(args or ["watch"])
    cluster = Cluster.from_env()
    if options.command == "watch":
        watch(cluster, hostfile_path(), options.interval)
    elif options.command == "once":
        sys.stdout.write(cluster.hostfile_text(cluster.discover()))
    elif options.command == "wait":
        hostfile = None if options.no_hostfile else hostfile_path()
        return wait(cluster, options.workers, options.timeout, hostfile)
    elif options.command == "scale":
        scale(options.replicas, cluster.worker_prefix)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:
        sys.exit(130)
