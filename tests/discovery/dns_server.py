"""A small authoritative DNS server (dnspython, UDP and TCP) publishing what cluster DNS would for ready pods.

For the headless Service with publishNotReadyAddresses false, Kubernetes DNS answers
``_ssh._tcp.<service domain>`` SRV with one record per ready endpoint (target = the pod's FQDN, its
address in the additional section) and ``<pod>.<service domain>`` A with its address; names of pods that
are not ready do not exist. The test calls ``publish``/``withdraw`` as readiness changes and gets the
time each change is visible.

Like CoreDNS, an answer that does not fit (the client's EDNS size over UDP, 65,535 bytes or ``tcp_limit``
over TCP) keeps the SRV records that fit and sets TC. ``Faults`` adds what CoreDNS does at scale now and
then: NXDOMAIN for a ready pod (coredns/coredns#6518, #6658) and queries that get no answer; and what a
network that drops IP fragments does: UDP answers over the MTU that never arrive.
"""

from __future__ import annotations

import random
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import dns.rrset

TTL = 0  # what CoreDNS's kubernetes plugin gives headless records by default is 5 s; 0 keeps tests honest
TCP_LIMIT = 65535


@dataclass
class Faults:
    """Stray denials and lost queries, at random with a fixed seed.

    A ready pod is denied (NXDOMAIN for its name, its record left out of a whole SRV answer) with
    probability ``deny``, but never in more than ``max_denials_in_row`` answers about it in a row;
    a query is dropped unanswered with probability ``drop`` (``drop_lookups`` for the A queries).
    (A cut SRV answer says nothing of the pods it leaves out, so it denies none.)

    The row counts every answer that said a pod is not there, true ones too (``absent``): a client
    cannot tell them apart, so a pod back from a spell not ready is denied no more than the rest allow.
    The row is the client's: on a loaded machine a client may give up waiting for an answer the server
    sent. Once a pod was answered truly it is answered truly until ``next_round`` (the client that asks
    again must not meet a denial the row missed), and ``next_round`` is told which pods the client got no
    answer about: the answers it never read do not move their row.
    """

    deny: float = 0.0
    drop: float = 0.0
    drop_lookups: float = 0.0  # lookups of one name only (A queries)
    lost_names: frozenset[str] = frozenset()  # names whose lookups are never answered
    # UDP answers longer than this many bytes never arrive (a path that drops IP fragments loses every one
    # over the MTU, about 1,472 bytes); 0: no UDP answer arrives. TCP answers are not touched.
    udp_max: int | None = None
    max_denials_in_row: int = 0
    seed: int = 0
    denials: int = 0
    drops: int = 0
    udp_losses: int = 0
    _in_row: dict[str, int] = field(default_factory=dict)
    _answered_truly: set[str] = field(default_factory=set)  # this round
    _row_at_round_start: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def next_round(self, unseen: Iterable[str] = ()) -> None:
        """A new sweep begins; ``unseen``: the pods whose answers in the last one the client never read."""
        for fqdn in unseen:
            fqdn = fqdn.rstrip(".").lower()
            self._in_row[fqdn] = self._row_at_round_start.get(fqdn, 0)
        self._row_at_round_start = dict(self._in_row)
        self._answered_truly.clear()

    def absent(self, fqdn: str) -> None:
        """An answer said truly that ``fqdn`` is not there: it counts toward the row."""
        self._in_row[fqdn] = self._in_row.get(fqdn, 0) + 1

    def denied(self, fqdn: str) -> bool:
        if (
            fqdn not in self._answered_truly
            and self._in_row.get(fqdn, 0) < self.max_denials_in_row
            and self._rng.random() < self.deny
        ):
            self._in_row[fqdn] = self._in_row.get(fqdn, 0) + 1
            self.denials += 1
            return True
        self._in_row[fqdn] = 0
        self._answered_truly.add(fqdn)
        return False

    def lost_over_udp(self, reply: bytes) -> bool:
        if self.udp_max is not None and len(reply) > self.udp_max:
            self.udp_losses += 1
            return True
        return False

    def dropped(self, lookup: bool) -> bool:
        if self._rng.random() < (self.drop_lookups if lookup and self.drop_lookups else self.drop):
            self.drops += 1
            return True
        return False


class ClusterDns:
    def __init__(
        self,
        address: str,
        service_domain: str,
        port_name: str = "ssh",
        port: int = 2222,
        dns_port: int = 53,
        tcp_limit: int = TCP_LIMIT,
        faults: Faults | None = None,
        srv_order: Callable[[str], Any] = str,
    ) -> None:
        self.service_domain = service_domain.rstrip(".").lower()
        self.srv_name = f"_{port_name}._tcp.{self.service_domain}"
        self.port = port
        self.tcp_limit = tcp_limit
        self.faults = faults
        # The order of the SRV records (a sort key of the FQDN; default: the names' own). No DNS server
        # promises one, so a cut answer may hold any subset: tests pick the one that hides the most.
        self.srv_order = srv_order
        self._pods: dict[str, str] = {}  # FQDN -> address of ready pods
        self._withdrawn: set[str] = set()  # pods once ready, not now: a whole SRV answer speaks for them
        self._record_cache: dict[tuple[dns.name.Name, str, str, int], tuple[dns.rrset.RRset, dns.rrset.RRset]] = {}
        self._lock = threading.Lock()
        self._address = address
        self._dns_port = dns_port
        self._sock = self._udp_socket()
        self._stop = threading.Event()
        self._tcp: socketserver.ThreadingTCPServer | None = None
        self.queries = 0
        self.tcp_queries = 0
        self._bound = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def server(self) -> tuple[str, int]:
        """The (address, port) a client asks, once the server listens."""
        self._bound.wait(10)
        return self._address, self._sock.getsockname()[1]

    def publish(self, fqdn: str, address: str) -> float:
        self._records(dns.name.from_text(self.srv_name), fqdn.lower(), address, 1)  # ready for big answers
        with self._lock:
            self._pods[fqdn.lower()] = address
            self._withdrawn.discard(fqdn.lower())
            return time.time()

    def withdraw(self, fqdn: str) -> float:
        with self._lock:
            self._pods.pop(fqdn.lower(), None)
            self._withdrawn.add(fqdn.lower())
            return time.time()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()
        if self._tcp is not None:
            self._tcp.shutdown()
            self._tcp.server_close()

    def answer(self, wire: bytes, limit: int | None = None) -> bytes | None:
        """The response to ``wire``, at most ``limit`` bytes (default: the client's UDP size); None: dropped."""
        request = dns.message.from_wire(wire)
        if self.faults is not None and self.faults.dropped(request.question[0].rdtype == dns.rdatatype.A):
            return None
        if self.faults is not None and request.question[0].name.to_text().rstrip(".").lower() in self.faults.lost_names:
            return None
        if limit is None:
            limit = max(512, request.payload) if request.edns >= 0 else 512
        response = dns.message.make_response(request)
        response.flags |= dns.flags.AA
        question = request.question[0]
        name = question.name.to_text().rstrip(".").lower()
        with self._lock:
            pods = dict(self._pods)
            withdrawn = set(self._withdrawn)
        if name == self.srv_name and pods:
            if question.rdtype in (dns.rdatatype.SRV, dns.rdatatype.ANY):
                return self._srv_response(response, question.name, pods, withdrawn, limit)
        elif name in pods and not self._denied(name):
            if question.rdtype == dns.rdatatype.A:
                response.answer.append(dns.rrset.from_text(question.name, TTL, "IN", "A", pods[name]))
        else:
            if name not in pods and self.faults is not None:
                self.faults.absent(name)
            response.set_rcode(dns.rcode.NXDOMAIN)
        return response.to_wire()

    def _denied(self, fqdn: str) -> bool:
        """A stray denial of a ready pod in an answer that speaks for it (its name, or the whole SRV set)."""
        return self.faults is not None and self.faults.denied(fqdn)

    def _srv_response(
        self,
        response: dns.message.Message,
        owner: dns.name.Name,
        pods: dict[str, str],
        withdrawn: set[str],
        limit: int,
    ) -> bytes:
        def render(fqdns: list[str]) -> tuple[bytes, bool]:
            weight = max(1, 100 // max(1, len(fqdns)))
            # one RRset per record, so that the renderer can stop between records, as CoreDNS does
            records = [self._records(owner, fqdn, pods[fqdn], weight) for fqdn in fqdns]
            response.answer = [srv for srv, _ in records]
            response.additional = [address for _, address in records]
            wire = response.to_wire(max_size=limit, prefer_truncation=True)
            answers, _, additional = struct.unpack_from("!HHH", wire, 6)
            whole = answers == len(fqdns) and additional >= len(fqdns)  # (and the OPT record)
            if not whole:  # records left out: TC, as CoreDNS sets it
                flags = struct.unpack_from("!H", wire, 2)[0] | dns.flags.TC
                wire = wire[:2] + struct.pack("!H", flags) + wire[4:]
            return wire, whole

        fqdns = sorted(pods, key=self.srv_order)
        wire, whole = render(fqdns)
        if whole:  # stray denials leave records out of a whole answer only
            if self.faults is not None:
                for fqdn in withdrawn:
                    self.faults.absent(fqdn)
            kept = [fqdn for fqdn in fqdns if not self._denied(fqdn)]
            if kept != fqdns:
                wire, _ = render(kept)
        return wire

    def _records(
        self, owner: dns.name.Name, fqdn: str, address: str, weight: int
    ) -> tuple[dns.rrset.RRset, dns.rrset.RRset]:
        """A pod's SRV and A records, made once: parsing them anew for every answer made a 4,096-pod answer
        take over a second on a busy machine, longer than a client waits."""
        key = (owner, fqdn, address, weight)
        records = self._record_cache.get(key)
        if records is None:
            records = (
                dns.rrset.from_text(owner, TTL, "IN", "SRV", f"0 {weight} {self.port} {fqdn}."),
                dns.rrset.from_text(f"{fqdn}.", TTL, "IN", "A", address),
            )
            self._record_cache[key] = records
        return records

    @staticmethod
    def _udp_socket() -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        sock.settimeout(0.2)
        return sock

    def _bind(self) -> bool:
        # podman gives the bridge its gateway address only when the first container joins.
        while not self._stop.is_set():
            try:
                self._sock.bind((self._address, self._dns_port))
            except OSError:
                time.sleep(0.01)
                continue
            try:
                self._serve_tcp(self._sock.getsockname()[1])
            except OSError:  # the free UDP port the kernel chose is taken over TCP: choose again
                if self._dns_port:
                    raise
                self._sock.close()
                self._sock = self._udp_socket()
                continue
            self._bound.set()
            return True
        return False

    def _serve_tcp(self, port: int) -> None:
        dns_server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(2)
                try:
                    header = sock.recv(2, socket.MSG_WAITALL)
                    wire = sock.recv(struct.unpack("!H", header)[0], socket.MSG_WAITALL)
                except (OSError, struct.error):
                    return
                dns_server.tcp_queries += 1
                reply = dns_server.answer(wire, dns_server.tcp_limit)
                if reply is not None:
                    sock.sendall(struct.pack("!H", len(reply)) + reply)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._tcp = socketserver.ThreadingTCPServer((self._address, port), Handler)
        self._tcp.daemon_threads = True
        threading.Thread(target=self._tcp.serve_forever, args=(0.05,), daemon=True).start()

    def _serve(self) -> None:
        if not self._bind():
            return
        while not self._stop.is_set():
            try:
                wire, client = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.queries += 1
            try:
                reply = self.answer(wire)
                if reply is not None and not (self.faults is not None and self.faults.lost_over_udp(reply)):
                    self._sock.sendto(reply, client)
            except Exception:
                continue
