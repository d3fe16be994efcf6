"""kompi_discovery against a real DNS server in the test process (UDP and TCP, CoreDNS's truncation).

The sizes are those that broke: one SRV answer holds about 1,100 workers, so 1,500 and 4,096 need the
lookups by name. Stray NXDOMAINs and lost queries (coredns/coredns#6518, #6658) come from ``Faults``;
the design's bound is that a ready worker leaves the hostfile only when 3 sweeps in a row denied it.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.discovery.banner import sshd_banner
from tests.discovery.dns_server import ClusterDns, Faults
from tests.discovery.module import kd

DOMAIN = "big.hpc.svc.cluster.local"
CLUSTER = kd.cluster.Cluster(DOMAIN, "big-worker", 1)
SMALL_TCP_LIMIT = 2048  # about 40 workers per answer: the cut path without thousands of workers
# About 800 workers per answer, as stock CoreDNS cuts with longer names (docs/scale.md); this server's short
# names fit about 1,090 in 65,535 bytes.
COREDNS_TCP_LIMIT = 48000
# The fault tests' own ordinals (below 320): each lookup past them, up to kompi's 4,096, would only add a
# lost query now and then, and a minute to the test.
FAULT_LIMIT = 320
TIMEOUT = 0.5  # per query (kompi's own); a Python server takes a while to build 1,500 records
LOST = 0.1  # per query, where the test loses queries on purpose


@contextmanager
def cluster_dns(**options: object) -> Iterator[ClusterDns]:
    server = ClusterDns("127.0.0.1", DOMAIN, dns_port=0, **options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.close()


def publish(server: ClusterDns, ordinals: range | list[int] | set[int], address: str = "127.0.0.1") -> None:
    for ordinal in ordinals:
        server.publish(CLUSTER.fqdn(ordinal), address)


@pytest.mark.parametrize("workers", [1500, 4096])
def test_a_cut_srv_answer_is_never_taken_as_the_cluster(workers: int) -> None:
    with cluster_dns() as server:
        publish(server, range(workers))
        answer = kd.dns_client.query_srv(CLUSTER.srv_name, [server.server])
        assert not answer.complete and 0 < len(answer.records) < workers  # what one message holds
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        assert discovery.sweep() == set(range(workers))
        assert discovery.last.cut
        assert CLUSTER.hostfile_text(discovery.listed).count("\n") == workers


def test_a_whole_answer_is_one_query() -> None:
    with cluster_dns() as server:
        publish(server, range(20))  # fits in 4,096 bytes over UDP
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        assert discovery.sweep() == set(range(20))
        assert (server.queries, server.tcp_queries, discovery.last.cut) == (1, 0, False)
        assert discovery.port == 2222 and discovery.addresses[7] == "127.0.0.1"


def test_a_scale_up_far_past_the_answer_is_found_in_one_sweep() -> None:
    with cluster_dns(tcp_limit=SMALL_TCP_LIMIT) as server:
        publish(server, range(3))
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        assert discovery.sweep() == {0, 1, 2}
        publish(server, range(3, 1000))  # 0..999 ready, an answer holds about 40
        assert discovery.sweep() == set(range(1000))
        # far past every ready worker, behind 900 that are not ready yet: found in the same sweep
        server.publish(CLUSTER.fqdn(1900), "127.0.0.1")
        assert discovery.sweep() == set(range(1000)) | {1900}
        publish(server, range(1000, 1900))
        assert discovery.sweep() == set(range(1901))


def ordinal_of(fqdn: str) -> int:
    return int(fqdn.split(".")[0].rsplit("-", 1)[1])


# The sizes: 1,800 workers with 900-1199 not ready; 4,096 with two separate blocks of 200 not ready.
LATE_BLOCKS = [(1800, [range(900, 1200)]), (4096, [range(1000, 1200), range(2600, 2800)])]


@pytest.mark.parametrize(("workers", "blocks"), LATE_BLOCKS, ids=["1800", "4096"])
def test_ready_workers_above_a_block_of_late_ones_are_found(workers: int, blocks: list[range]) -> None:
    """A server that lists the lowest ordinals first (no server promises an order) cuts its answer below the
    block: every ready worker above it is found all the same, and a late one within a sweep of turning ready."""
    late = {ordinal for block in blocks for ordinal in block}
    ready = set(range(workers)) - late
    with cluster_dns(tcp_limit=COREDNS_TCP_LIMIT, srv_order=ordinal_of) as server:
        publish(server, ready)
        answer = kd.dns_client.query_srv(CLUSTER.srv_name, [server.server])
        assert max(CLUSTER.ready_workers(answer.records)) < min(late)  # the cut hides everything above the block
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        listed = discovery.sweep()
        assert listed == ready, f"{len(listed)} of {len(ready)} ready workers listed"
        for block in blocks:  # a late worker of each block turns ready: the next sweep lists it
            publish(server, [block[-1]])
        assert discovery.sweep() == ready | {block[-1] for block in blocks}


def discover_once(server: ClusterDns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """`kompi-discover once` as the master runs it, its resolv.conf naming ``server``."""
    resolv_conf = tmp_path / "resolv.conf"
    resolv_conf.write_text(f"nameserver {server.server[0]}\n")
    monkeypatch.setattr(kd.dns_client, "DNS_PORT", server.server[1])
    monkeypatch.setenv("KOMPI_RESOLV_CONF", str(resolv_conf))
    monkeypatch.setenv("KOMPI_SERVICE_DOMAIN", DOMAIN)
    monkeypatch.setenv("KOMPI_WORKER_PREFIX", CLUSTER.worker_prefix)
    return int(kd.cli.main(["kompi-discover", "once"]))


def test_discover_once_is_exact_behind_a_block_of_late_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ready = set(range(1900)) - set(range(1000, 1100))  # the trial: 1,900 ready, 1000-1099 not
    with cluster_dns(tcp_limit=COREDNS_TCP_LIMIT, srv_order=ordinal_of) as server:
        publish(server, ready)
        assert discover_once(server, tmp_path, monkeypatch) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == len(ready), f"exit 0 with {out.count(chr(10))} of {len(ready)} ready workers"
    assert out == CLUSTER.hostfile_text(ready)


def test_discover_once_fails_when_a_worker_gets_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cut answer and one name DNS never answers: the hostfile might be short, so no hostfile and exit 1."""
    with cluster_dns(faults=Faults(lost_names=frozenset({CLUSTER.fqdn(1500)}))) as server:
        publish(server, range(1499))
        assert discover_once(server, tmp_path, monkeypatch) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "no answer for 1 worker's name" in err and err.count("\n") == 1


@pytest.mark.parametrize("tcp_limit", [65535, SMALL_TCP_LIMIT], ids=["whole", "cut"])
def test_a_worker_that_turns_not_ready_leaves_after_three_sweeps(tcp_limit: int) -> None:
    with cluster_dns(tcp_limit=tcp_limit) as server:
        publish(server, range(100))
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        assert discovery.sweep() == set(range(100))
        server.withdraw(CLUSTER.fqdn(42))
        server.withdraw(CLUSTER.fqdn(99))
        assert discovery.sweep() == set(range(100))
        assert discovery.sweep() == set(range(100))
        assert discovery.sweep() == set(range(100)) - {42, 99}
        publish(server, [42])  # back: listed at the first answer that says so
        assert discovery.sweep() == set(range(99))


@pytest.mark.parametrize(
    ("tcp_limit", "denials_in_row"),
    # Whole answers: a sweep denies a worker only if its SRV record and its name lookup both do (2 answers).
    # Cut answers: its name lookup alone (1 answer), unless the cut part of the answer lists it.
    [(65535, 5), (SMALL_TCP_LIMIT, 2)],
    ids=["whole", "cut"],
)
def test_stray_denials_and_lost_queries_never_drop_a_ready_worker(tcp_limit: int, denials_in_row: int) -> None:
    faults = Faults(deny=0.3, drop=0.05, max_denials_in_row=denials_in_row, seed=11)
    rng = random.Random(5)
    with cluster_dns(tcp_limit=tcp_limit, faults=faults) as server:
        ready = set(range(300))
        publish(server, ready)
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], LOST, limit=FAULT_LIMIT)
        gone_since: dict[int, int] = {}  # ordinal -> sweeps that answered for it since it turned not ready
        unseen: set[int] = set()  # workers whose answers the last sweep did not read (lost or too late)
        for sweep in range(30):
            faults.next_round(CLUSTER.fqdn(ordinal) for ordinal in unseen)
            for ordinal in rng.sample(range(320), 3):  # readiness changes between sweeps
                if ordinal in ready:
                    ready.discard(ordinal)
                    server.withdraw(CLUSTER.fqdn(ordinal))
                    gone_since[ordinal] = 0
                else:
                    ready.add(ordinal)
                    server.publish(CLUSTER.fqdn(ordinal), "127.0.0.1")
                    gone_since.pop(ordinal, None)
            before = set(discovery.listed)
            try:
                listed = discovery.sweep()
            except kd.dns_client.DnsError:  # the SRV query itself was lost three times: nothing changes
                assert discovery.listed == before
                unseen = set(range(320))
                continue
            unseen = set(discovery.last.unanswered)
            assert (before & ready) <= listed, f"sweep {sweep}: ready workers dropped: {(before & ready) - listed}"
            for ordinal in gone_since.keys() - discovery.last.unanswered:
                gone_since[ordinal] += 1
            # a worker that is not ready stays at most until 3 sweeps denied it (lost answers add sweeps)
            assert all(gone_since[o] < 3 or o not in listed or o in discovery.misses for o in listed - ready)
    assert faults.denials > 100 and faults.drops > 10  # the faults did happen


def test_without_any_answer_the_list_is_kept_and_the_cause_named() -> None:
    with cluster_dns() as server:
        publish(server, range(5))
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], LOST)
        assert discovery.sweep() == set(range(5))
        server.faults = Faults(drop=1.0)
        with pytest.raises(kd.dns_client.DnsError, match=f"no answer for {CLUSTER.srv_name}"):
            discovery.sweep()
        assert discovery.listed == set(range(5))


# A UDP datagram larger than the path's MTU travels as IP fragments; where they are dropped, every SRV answer
# over about 25 workers is lost (40 workers: about 2,000 bytes, under the 4,096 the client offers over UDP).
FRAGMENTS_DROPPED = 1472


@pytest.mark.parametrize(("workers", "udp_max"), [(40, FRAGMENTS_DROPPED), (5, 0)], ids=["fragments", "no-udp"])
def test_an_srv_query_unanswered_over_udp_is_asked_over_tcp(workers: int, udp_max: int) -> None:
    faults = Faults(udp_max=udp_max)
    with cluster_dns(faults=faults) as server:
        publish(server, range(workers))
        answer = kd.dns_client.query_srv(CLUSTER.srv_name, [server.server], TIMEOUT)
        assert answer.complete and len(answer.records) == workers
        assert (faults.udp_losses, server.tcp_queries) == (1, 1)
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT)
        assert discovery.sweep() == set(range(workers))
        assert not discovery.last.cut


def test_discover_once_lists_the_workers_where_udp_fragments_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with cluster_dns(faults=Faults(udp_max=FRAGMENTS_DROPPED)) as server:
        publish(server, range(40))
        assert discover_once(server, tmp_path, monkeypatch) == 0
    assert capsys.readouterr().out == CLUSTER.hostfile_text(range(40))


def test_an_srv_query_unanswered_over_udp_and_tcp_is_no_answer() -> None:
    with cluster_dns(faults=Faults(udp_max=0)) as server:
        publish(server, range(5))
        address = server.server
        server.close()  # nothing listens now: UDP gets no answer, TCP is refused
        with pytest.raises(kd.dns_client.DnsError, match=f"no answer for {CLUSTER.srv_name} .*over TCP: .*refused"):
            kd.dns_client.query_srv(CLUSTER.srv_name, [address], TIMEOUT)


def test_lookups_without_an_answer_change_nothing() -> None:
    lost = kd.dns_client.look_up([CLUSTER.fqdn(5)], [("127.0.0.1", unused_udp_port())], timeout=0.05)
    assert lost == {CLUSTER.fqdn(5): kd.dns_client.Lookup(None)}
    with cluster_dns(tcp_limit=SMALL_TCP_LIMIT) as server:
        publish(server, range(100))
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], LOST, limit=FAULT_LIMIT)
        assert discovery.sweep() == set(range(100))
        for ordinal in range(50, 100):
            server.withdraw(CLUSTER.fqdn(ordinal))
        server.faults = Faults(drop_lookups=1.0)  # the SRV query answers, no lookup does
        for _ in range(3):
            assert discovery.sweep() == set(range(100))
        assert set(range(50, 100)) <= discovery.last.unanswered
        assert not discovery.misses  # neither dropped nor counted as misses
        server.faults = None
        for _ in range(3):
            discovery.sweep()
        assert discovery.listed == set(range(50))


# The kernel refuses to send to the broadcast address (EACCES at connect and sendto), as it refuses an
# unreachable network (ENETUNREACH, a resolv.conf naming an IPv6 server without an IPv6 route): an OSError
# from the socket itself, not a lost answer.
REFUSED_SERVER = ("255.255.255.255", 53)


def test_a_server_the_kernel_refuses_is_no_answer_and_the_next_one_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """resolv.conf names a server no socket can reach, then one that answers: the SRV query and the lookups by
    name (a cut answer) both go on to the second; the sweep, and `kompi-discover once`, never die of the first."""
    with cluster_dns(tcp_limit=SMALL_TCP_LIMIT) as server:
        publish(server, range(100))
        discovery = kd.sweep.Discovery(CLUSTER, [REFUSED_SERVER, server.server], TIMEOUT, limit=FAULT_LIMIT)
        assert discovery.sweep() == set(range(100))
        assert discovery.last.cut and not discovery.last.unanswered
        resolv_conf = tmp_path / "resolv.conf"
        resolv_conf.write_text(f"nameserver {REFUSED_SERVER[0]}\nnameserver {server.server[0]}\n")
        monkeypatch.setattr(kd.dns_client, "DNS_PORT", server.server[1])
        monkeypatch.setenv("KOMPI_RESOLV_CONF", str(resolv_conf))
        monkeypatch.setenv("KOMPI_SERVICE_DOMAIN", DOMAIN)
        monkeypatch.setenv("KOMPI_WORKER_PREFIX", CLUSTER.worker_prefix)
        assert kd.cli.main(["kompi-discover", "once"]) == 0
    assert capsys.readouterr().out == CLUSTER.hostfile_text(range(100))


def test_socket_errors_on_every_server_are_no_answer_and_change_nothing(tmp_path: Path) -> None:
    """No server can be asked at all: the SRV query and the lookups raise DnsError naming the cause (the
    callers' "no answer": the watcher keeps the hostfile and asks again), never the OSError itself."""
    with pytest.raises(kd.dns_client.DnsError, match=r"255\.255\.255\.255: .*Permission denied"):
        kd.dns_client.query_srv(CLUSTER.srv_name, [REFUSED_SERVER])
    with pytest.raises(kd.dns_client.DnsError, match=r"255\.255\.255\.255: .*Permission denied"):
        kd.dns_client.look_up([CLUSTER.fqdn(0)], [REFUSED_SERVER])
    with pytest.raises(kd.dns_client.DnsError, match=r"cannot read .*/missing-resolv\.conf: "):
        kd.dns_client.nameservers(str(tmp_path / "missing-resolv.conf"))
    with cluster_dns(tcp_limit=SMALL_TCP_LIMIT) as server:
        publish(server, range(100))
        discovery = kd.sweep.Discovery(CLUSTER, [server.server], TIMEOUT, limit=FAULT_LIMIT)
        assert discovery.sweep() == set(range(100))
        discovery.servers = [REFUSED_SERVER]
        with pytest.raises(kd.dns_client.DnsError):
            discovery.sweep()
        assert discovery.listed == set(range(100)) and not discovery.misses


def unused_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_wait_names_the_missing_workers_on_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sshd_banner() as port, cluster_dns(port=port) as server:
        server.publish(CLUSTER.fqdn(0), "127.0.0.1")
        server.publish(CLUSTER.fqdn(2), "127.0.0.2")  # in DNS, but no sshd answers there
        assert kd.wait.wait(CLUSTER, 4, 0.5, None, poll=0.05, servers=[server.server]) == 1
        err = capsys.readouterr().err
        assert "big-worker-1 (not ready in DNS)" in err
        assert "big-worker-2 (sshd does not answer)" in err
        assert "big-worker-3 (not ready in DNS)" in err
        assert "3 missing: " in err and "big-worker-0 " not in err
        hostfile = tmp_path / "hostfile"
        hostfile.write_text(CLUSTER.hostfile_text([0]))
        assert kd.wait.wait(CLUSTER, 1, 0.3, hostfile, servers=[server.server]) == 0
        assert kd.wait.wait(CLUSTER, 1, 0.3, tmp_path / "none", servers=[server.server]) == 1
        assert "big-worker-0 (not in" in capsys.readouterr().err


def test_wait_for_thousands_asks_each_sshd_until_it_answers_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sshd_banner() as port, cluster_dns(port=port) as server:
        publish(server, range(1500))
        hostfile = tmp_path / "hostfile"
        hostfile.write_text(CLUSTER.hostfile_text(range(1500)))
        assert kd.wait.wait(CLUSTER, 1500, 60, hostfile, servers=[server.server]) == 0
        hostfile.write_text(CLUSTER.hostfile_text(range(1400)))
        assert kd.wait.wait(CLUSTER, 1500, 1, hostfile, servers=[server.server]) == 1
        err = capsys.readouterr().err
        assert "100 missing: big-worker-1400 (not in" in err and err.rstrip().endswith(" and 80 more")


def test_kompi_wait_looks_up_only_the_workers_it_waits_for() -> None:
    """kompi-wait sweeps 5 times a second: with a cut answer it asks about workers 0..N-1 and a block past them,
    not every ordinal up to kompi's limit as the watcher does."""
    with sshd_banner() as port, cluster_dns(port=port, tcp_limit=SMALL_TCP_LIMIT) as server:
        publish(server, range(100))
        assert kd.wait.wait(CLUSTER, 100, 30, None, servers=[server.server]) == 0
        assert server.queries < 2 * (1 + 100 + kd.sweep.PROBE_MARGIN)  # over UDP; at most a sweep or two
