"""kompi_discovery without containers: hostfile order and atomic write, DNS wire format."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path

import dns.message
import dns.rdatatype
import dns.rrset
import pytest
from annotated_types import Le

from kompi_components.config.schema import KompiConfig
from tests.discovery.module import PACKAGE, SCRIPT, kd

CLUSTER = kd.cluster.Cluster("mpi.hpc.svc.cluster.local", "mpi-worker", 2)


def srv(target: str, port: int = 2222) -> object:
    return kd.dns_client.SrvRecord(0, 100, port, target)


def test_hostfile_is_in_numeric_worker_order_with_slots() -> None:
    records = [srv(f"mpi-worker-{i}.mpi.hpc.svc.cluster.local") for i in (10, 2, 0, 1)]
    text = CLUSTER.hostfile_text(CLUSTER.ready_workers(records))
    assert text.splitlines() == [f"mpi-worker-{i}.mpi.hpc.svc.cluster.local slots=2" for i in (0, 1, 2, 10)]


def test_only_this_clusters_workers_count() -> None:
    names = [
        "mpi-master-0.mpi.hpc.svc.cluster.local",
        "10-0-0-5.mpi.hpc.svc.cluster.local",  # an endpoint without hostname (e.g. a Job's pod)
        "mpi-worker-3.other.hpc.svc.cluster.local",
        "mpi-worker-x.mpi.hpc.svc.cluster.local",
        "mpi-worker-01.mpi.hpc.svc.cluster.local",
        "MPI-Worker-4.mpi.hpc.svc.cluster.local.",
    ]
    assert list(CLUSTER.ready_workers(srv(name) for name in names)) == [4]
    assert CLUSTER.hostfile_text([]) == ""


def test_hostfile_is_replaced_atomically(tmp_path: Path) -> None:
    hostfile = tmp_path / "hostfile"
    texts = [CLUSTER.hostfile_text(range(n)) for n in (1, 50, 3, 400)]
    seen: set[str] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            if hostfile.exists():
                seen.add(hostfile.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(100):
        for text in texts:
            kd.cluster.write_atomically(hostfile, text)
    stop.set()
    reader.join()
    assert seen <= set(texts)  # never a partly written file
    assert hostfile.read_text() == texts[-1]
    assert os.stat(hostfile).st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["hostfile"]  # no temp files left


def dnspython_response(query: bytes, rcode: int, targets: list[str]) -> bytes:
    request = dns.message.from_wire(query)
    response = dns.message.make_response(request)
    response.set_rcode(rcode)
    name = request.question[0].name
    for target in targets:
        response.answer.append(dns.rrset.from_text(name, 5, "IN", "SRV", f"0 33 2222 {target}."))
    return response.to_wire()


def test_query_is_valid_dns_and_srv_answers_parse_with_compression() -> None:
    query = kd.dns_client.build_query(CLUSTER.srv_name, kd.dns_client.SRV, 0x1234)
    parsed = dns.message.from_wire(query)
    assert parsed.id == 0x1234
    assert str(parsed.question[0].name) == CLUSTER.srv_name + "."
    assert parsed.question[0].rdtype == dns.rdatatype.SRV
    assert parsed.edns == 0  # EDNS0: large answers (many workers) fit in one UDP reply
    targets = [f"mpi-worker-{i}.mpi.hpc.svc.cluster.local" for i in range(40)]
    wire = dnspython_response(query, 0, targets)
    assert b"\xc0\x0c" in wire  # answer owners are compression pointers to the question
    rcode, truncated, records = kd.dns_client.parse_srv_response(wire, 0x1234)
    assert (rcode, truncated) == (0, False)
    assert [r.target for r in records] == targets
    assert {r.port for r in records} == {2222}


def test_nxdomain_means_no_ready_worker_and_a_wrong_id_is_refused() -> None:
    query = kd.dns_client.build_query(CLUSTER.srv_name, kd.dns_client.SRV, 7)
    assert kd.dns_client.parse_srv_response(dnspython_response(query, 3, []), 7) == (3, False, [])
    with pytest.raises(ValueError):
        kd.dns_client.parse_srv_response(dnspython_response(query, 0, []), 8)
    with pytest.raises((ValueError, struct.error)):
        kd.dns_client.parse_srv_response(b"\0" * 5, 7)


def test_resolv_conf_nameservers(tmp_path: Path) -> None:
    conf = tmp_path / "resolv.conf"
    conf.write_text("search hpc.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\nnameserver fd00::a\n")
    assert kd.dns_client.nameservers(str(conf)) == [("10.96.0.10", 53), ("fd00::a", 53)]


def test_a_computing_master_comes_first_with_its_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOMPI_SERVICE_DOMAIN", "mpi.hpc.svc.cluster.local")
    monkeypatch.setenv("KOMPI_WORKER_PREFIX", "mpi-worker")
    monkeypatch.setenv("KOMPI_SLOTS_PER_WORKER", "2")
    monkeypatch.setenv("KOMPI_MASTER_SLOTS", "2")
    monkeypatch.setattr(kd.cluster.socket, "gethostname", lambda: "mpi-master-0")
    assert kd.cluster.Cluster.from_env().hostfile_text([1, 0]) == (
        "mpi-master-0.mpi.hpc.svc.cluster.local slots=2\n"
        "mpi-worker-0.mpi.hpc.svc.cluster.local slots=2\n"
        "mpi-worker-1.mpi.hpc.svc.cluster.local slots=2\n"
    )
    monkeypatch.delenv("KOMPI_MASTER_SLOTS")
    assert kd.cluster.Cluster.from_env().hostfile_text([0]) == "mpi-worker-0.mpi.hpc.svc.cluster.local slots=2\n"


def test_a_cut_answer_is_looked_up_to_kompis_worker_limit() -> None:
    """kompi_discovery cannot import kompi_components (a standard-library script in the image): the limit it
    looks up to with a cut answer is held equal to kompi:workers' maximum here."""
    (maximum,) = [item.le for item in KompiConfig.model_fields["workers"].metadata if isinstance(item, Le)]
    assert maximum == kd.sweep.WORKERS_LIMIT


def test_the_commands_run_the_package_beside_the_launcher_through_their_symlinks(tmp_path: Path) -> None:
    """As images/scripts/install.sh lays them out: the package and the launcher in one directory, the commands
    symlinks to the launcher elsewhere; each finds the package and answers under its own name."""
    lib, bin_dir = tmp_path / "lib", tmp_path / "bin"
    shutil.copytree(PACKAGE, lib / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(SCRIPT, lib / SCRIPT.name)
    bin_dir.mkdir()
    environment = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1"}
    for command, args in (("kompi-discover", []), ("kompi-wait", ["3"])):
        (bin_dir / command).symlink_to(lib / SCRIPT.name)
        run = subprocess.run(
            [sys.executable, str(bin_dir / command), "--help"], cwd=tmp_path, env=environment, capture_output=True
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.decode().startswith(f"usage: {command} ")
        run = subprocess.run(
            [sys.executable, str(bin_dir / command), *args], cwd=tmp_path, env=environment, capture_output=True
        )
        assert (run.returncode, run.stderr.decode()) == (
            1,
            f"{command}: environment variable 'KOMPI_SERVICE_DOMAIN' is not set\n",
        )
