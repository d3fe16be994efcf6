"""What kompi's pieces weigh at 64, 1,024, 4,096 and 10,000 workers, from kompi's own code (docs/scale.md).

Measured here, without a cluster: the objects the dev stack renders (render_objects, the code `kompi up`
runs), the SSH Secret's data as `up` derives it (kompi_components.ssh_identity), the hostfile
`kompi-discover` writes, and the SRV answer a DNS server sends for that many workers
(tests/discovery/dns_server.py renders it as CoreDNS does: one record per worker with its A record, cut at
65,535 bytes), hence how many workers one answer holds and the queries of one sweep. 10,000 is past
`kompi:workers`' limit of 4,096: its DNS and hostfile figures are what the same code would do, its objects
those of 4,096 (they do not grow with the workers: the table shows it).
Run: venv/bin/python bench/scale_table.py
"""

from __future__ import annotations

import json
import math
import os
import socket
import sys
from pathlib import Path

import dns.message
import dns.rdatatype
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kompi_components.config.schema import KompiConfig
from kompi_components.naming import Names
from kompi_components.render import render_objects
from kompi_components.ssh_identity import identity_files
from tests.discovery.dns_server import ClusterDns
from tests.discovery.module import kd
from tests.stacks import REPO

SIZES = (64, 1024, 4096, 10_000)
DNS_LIMIT = 65_535  # a DNS message's largest size (TCP's length prefix)
# kompi:workers' limit, as the config schema sets it
MAX_WORKERS = next(limit.le for limit in KompiConfig.model_fields["workers"].metadata if hasattr(limit, "le"))
OPEN_MPI_RSH_CONCURRENT = 128  # plm_rsh_num_concurrent's default: ssh sessions the launcher opens at once


def dev_stack(workers: int) -> dict[str, str]:
    stack = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    raw = {key: value if isinstance(value, str) else json.dumps(value) for key, value in stack.items()}
    return raw | {"kompi:workers": str(workers)}


def object_count(workers: int) -> int:
    """The objects `kompi up` creates for the dev stack at ``workers`` (render_objects: the same code)."""
    return len(render_objects(dev_stack(workers)))


def ssh_secret_bytes(names: Names) -> int:
    """Bytes of the SSH Secret's data as `up` makes it (the offline render shows placeholders instead)."""
    files = identity_files(os.urandom(32), os.urandom(32), names.cluster, names.known_host_patterns())
    return sum(len(value.encode()) for value in files.as_secret_data().values())


def srv_answer(cluster: kd.cluster.Cluster, workers: int) -> tuple[int, int]:
    """(workers one SRV answer holds, bytes the whole answer would need) as a CoreDNS-like server cuts it."""
    server = ClusterDns("127.0.0.1", cluster.service_domain, dns_port=0)  # answer() alone: no query is sent
    try:
        for ordinal in range(workers):
            server.publish(cluster.fqdn(ordinal), socket.inet_ntoa((0x0A000000 + ordinal).to_bytes(4, "big")))
        query = dns.message.make_query(cluster.srv_name, dns.rdatatype.SRV)
        wire = server.answer(query.to_wire(), DNS_LIMIT)
        assert wire is not None
        held = len(dns.message.from_wire(wire, ignore_trailing=True, one_rr_per_rrset=True).answer)
        whole = len(wire) if held == workers else math.ceil(len(wire) / held * workers)
        return held, whole
    finally:
        server.close()


def main() -> None:
    names = Names("kompi-dev", "kompi-dev", "cluster.local")
    cluster = kd.cluster.Cluster(names.service_domain, names.workers, 1)
    print(f"dev stack, cluster.local, one slot per worker; past {MAX_WORKERS} workers, objects as at {MAX_WORKERS}")
    header = (
        "workers  objects  SSH Secret B  hostfile KiB  SRV answer holds  whole answer KiB  queries per sweep  ssh waves"
    )
    print(header)
    secrets = ssh_secret_bytes(names)  # the same at every size: the host key is trusted by a wildcard
    for workers in SIZES:
        objects = object_count(min(workers, MAX_WORKERS))
        hostfile = len(cluster.hostfile_text(range(workers)).encode())
        held, whole = srv_answer(cluster, workers)
        # a whole answer: one SRV query; a cut one: the SRV query and every other ordinal below kompi's limit
        # by name, and a block past the highest ready worker where that block reaches past the limit
        probed = max(workers, kd.sweep.WORKERS_LIMIT)
        queries = 1 if held >= workers else 1 + (probed - held) + max(0, workers + kd.sweep.PROBE_MARGIN - probed)
        waves = math.ceil(workers / OPEN_MPI_RSH_CONCURRENT)
        print(
            f"{workers:7}  {objects:7}  {secrets:13}  {hostfile / 1024:12.1f}  {held:16}  {whole / 1024:16.1f}"
            f"  {queries:17}  {waves:9}"
        )


if __name__ == "__main__":
    main()
