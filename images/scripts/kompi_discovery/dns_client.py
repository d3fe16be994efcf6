"""kompi_discovery's DNS client (Python standard library only): the SRV query of the Service's named port and
lookups of single names, many in flight at once, over the nameservers of resolv.conf.

Each answer is one of three: records, "no such name" (NXDOMAIN), or no usable answer (DnsError for the
SRV query and when no server can be asked; Lookup(None) for one name), which changes nothing.
"""

from __future__ import annotations

import os
import random
import selectors
import socket
import struct
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

TYPE_A = 1
TYPE_AAAA = 28
SRV = 33
OPT = 41
CLASS_IN = 1
RCODE_NOERROR = 0
RCODE_NXDOMAIN = 3
EDNS_PAYLOAD = 4096
QUERY_TIMEOUT = 0.5
# A TCP query in all (connect, query, an answer of up to 64 KiB). An SRV query takes at most
# QUERY_TIMEOUT + TCP_TIMEOUT (2.5 s) per nameserver: UDP, then TCP when the UDP answer was cut or never came.
TCP_TIMEOUT = 2.0
DNS_PORT = 53
# Lookups of single names in flight at once: enough to sweep 4,096 workers in a fraction of a second,
# few enough that a DNS server's socket buffer never overflows.
LOOKUP_WINDOW = 128
LOOKUP_ATTEMPTS = 3

Server = tuple[str, int]  # a DNS server's address and port


class DnsError(RuntimeError):
    """No usable answer (timeout, server failure, socket error): the caller keeps what it knew before."""


@dataclass(frozen=True, order=True)
class SrvRecord:
    priority: int
    weight: int
    port: int
    target: str  # lower case, no trailing dot
    address: str = ""  # from the answer's additional section, when it has one


class Lookup(NamedTuple):
    """What DNS said of one name: it exists (True), does not (False, NXDOMAIN), or no usable answer (None)."""

    exists: bool | None
    address: str = ""


@dataclass(frozen=True)
class SrvAnswer:
    records: list[SrvRecord]
    complete: bool  # False: the server cut the answer (TC over TCP): the records are some of the set


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


def parse_header(message: bytes) -> tuple[int, int, str, int]:
    """(id, flags, question name, offset after the question) of a response."""
    if len(message) < 12:
        raise ValueError("short DNS message")
    ident, flags, qdcount = struct.unpack_from("!HHH", message)
    if not flags & 0x8000 or qdcount != 1:
        raise ValueError("not a response to one question")
    qname, offset = read_name(message, 12)
    return ident, flags, qname, offset + 4


def _records(message: bytes, offset: int) -> Iterator[tuple[str, int, bytes, int]]:
    """(owner, type, rdata, rdata offset) of every record in the answer, authority and additional sections."""
    ancount, nscount, arcount = struct.unpack_from("!HHH", message, 6)
    for _ in range(ancount + nscount + arcount):
        owner, offset = read_name(message, offset)
        rtype, _rclass, _ttl, length = struct.unpack_from("!HHIH", message, offset)
        offset += 10
        yield owner, rtype, message[offset : offset + length], offset
        offset += length


def _address(rtype: int, rdata: bytes) -> str | None:
    if rtype == TYPE_A and len(rdata) == 4:
        return socket.inet_ntop(socket.AF_INET, rdata)
    if rtype == TYPE_AAAA and len(rdata) == 16:
        return socket.inet_ntop(socket.AF_INET6, rdata)
    return None


def parse_srv_response(message: bytes, query_id: int) -> tuple[int, bool, list[SrvRecord]]:
    """(rcode, truncated, SRV answers) of a response to query ``query_id``; each record carries its
    target's address when the response's additional section has it."""
    ident, flags, _qname, offset = parse_header(message)
    if ident != query_id:
        raise ValueError("not the response to this query")
    records: list[SrvRecord] = []
    addresses: dict[str, str] = {}
    for owner, rtype, rdata, at in _records(message, offset):
        if rtype == SRV:
            priority, weight, port = struct.unpack_from("!HHH", message, at)
            records.append(SrvRecord(priority, weight, port, read_name(message, at + 6)[0]))
        elif (address := _address(rtype, rdata)) is not None:
            addresses.setdefault(owner, address)
    records = [replace(record, address=addresses.get(record.target, "")) for record in records]
    return flags & 0x000F, bool(flags & 0x0200), records


def parse_lookup_response(message: bytes) -> tuple[int, str, Lookup]:
    """(id, question name, what it says of the name) of a response to a lookup."""
    ident, flags, qname, offset = parse_header(message)
    rcode = flags & 0x000F
    if rcode == RCODE_NXDOMAIN:
        return ident, qname, Lookup(False)
    if rcode != RCODE_NOERROR:
        return ident, qname, Lookup(None)
    for owner, rtype, rdata, _ in _records(message, offset):
        if (address := _address(rtype, rdata)) is not None and owner == qname:
            return ident, qname, Lookup(True, address)
    return ident, qname, Lookup(True)  # the name exists without an address of this type


def resolv_conf_path() -> str:
    return os.environ.get("KOMPI_RESOLV_CONF", "/etc/resolv.conf")


def nameservers(resolv_conf: str | None = None) -> list[Server]:
    path = Path(resolv_conf or resolv_conf_path())
    try:
        text = path.read_text()
    except OSError as error:  # no server to ask: no answer, asked again next sweep
        raise DnsError(f"cannot read {path}: {error}") from None
    servers = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            servers.append((fields[1], DNS_PORT))
    return servers or [("127.0.0.1", DNS_PORT)]


def _family(server: Server) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in server[0] else socket.AF_INET


def _ask_udp(server: Server, query: bytes, timeout: float) -> bytes:
    with socket.socket(_family(server), socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(query, server)
        return sock.recv(65535)


def _ask_tcp(server: Server, query: bytes, timeout: float) -> bytes:
    """The answer within ``timeout`` seconds in all, however slowly it comes (TimeoutError after)."""
    deadline = time.monotonic() + timeout
    with socket.create_connection(server, timeout=timeout) as sock:
        sock.sendall(struct.pack("!H", len(query)) + query)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack_from("!H", data)[0]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            sock.settimeout(left)
            chunk = sock.recv(65535)
            if not chunk:
                raise OSError("connection closed")
            data += chunk
        return data[2:]


@dataclass
class QueryCount:
    """Queries sent since the process started (kompi-discover reports them when it stops)."""

    sent: int = 0


QUERIES = QueryCount()


def query_srv(name: str, servers: Sequence[Server] | None = None, timeout: float = QUERY_TIMEOUT) -> SrvAnswer:
    """SRV records of ``name``: no records when the name does not exist (no ready endpoint).

    A UDP answer that does not fit, or that never comes, is asked again over TCP (once, the same server);
    a TCP answer that still carries the TC bit is what the server could fit in one message, and says so
    (``complete`` False). Each server in turn, until one answers; DnsError when none does.
    """
    problems = []
    for server in servers or nameservers():
        query_id = random.randrange(1 << 16)
        query = build_query(name, SRV, query_id)
        after_udp = ""  # why the answer was asked over TCP, for the error when that fails too
        try:
            QUERIES.sent += 1
            reply: bytes | None
            try:
                reply = _ask_udp(server, query, timeout)
            except TimeoutError:
                # No answer at all: where IP fragments are dropped, every UDP answer over the MTU (about 25
                # workers) is lost on the way, while the same answer over TCP gets through.
                reply = None
                after_udp = f"no answer over UDP in {timeout:g} s, then over TCP: "
            truncated = False
            if reply is not None:
                rcode, truncated, records = parse_srv_response(reply, query_id)
            if reply is None or truncated:
                QUERIES.sent += 1
                rcode, truncated, records = parse_srv_response(_ask_tcp(server, query, TCP_TIMEOUT), query_id)
        except (OSError, ValueError, struct.error, IndexError) as error:
            problems.append(f"{server[0]}: {after_udp}{error or type(error).__name__}")
            continue
        if rcode == RCODE_NOERROR:
            return SrvAnswer(records, complete=not truncated)
        if rcode == RCODE_NXDOMAIN:
            return SrvAnswer([], complete=True)
        problems.append(f"{server[0]}: rcode {rcode}")
    raise DnsError(f"no answer for {name} ({'; '.join(problems)})")


def look_up(
    names: Iterable[str],
    servers: Sequence[Server] | None = None,
    timeout: float = QUERY_TIMEOUT,
    window: int = LOOKUP_WINDOW,
    attempts: int = LOOKUP_ATTEMPTS,
) -> dict[str, Lookup]:
    """What DNS says of each name (A queries): it exists (an answer, with or without an address), it does
    not (NXDOMAIN), or no usable answer after ``attempts`` tries spread over the servers. Up to ``window``
    queries are in flight at once, on one UDP socket per server. Raises DnsError when no server can be
    asked at all (no socket to any of them)."""
    servers = list(servers or nameservers())
    result: dict[str, Lookup] = {}
    queue = deque((name.rstrip(".").lower(), 0) for name in names)
    if not queue:
        return result
    in_flight: dict[int, tuple[str, int, float]] = {}  # id -> (name, attempt, deadline)
    next_id = random.randrange(1 << 16)
    selector = selectors.DefaultSelector()
    sockets = []
    problems = []
    for server in servers:
        # A server the kernel will not send to (ENETUNREACH, EACCES, no file descriptor left) is left out;
        # the names are asked of the others.
        try:
            sock = socket.socket(_family(server), socket.SOCK_DGRAM)
        except OSError as error:
            problems.append(f"{server[0]}: {error}")
            continue
        try:
            sock.setblocking(False)
            sock.connect(server)  # answers from anyone else are dropped by the kernel
            selector.register(sock, selectors.EVENT_READ, sock)
        except OSError as error:
            sock.close()
            problems.append(f"{server[0]}: {error}")
            continue
        sockets.append(sock)
    if not sockets:
        selector.close()
        raise DnsError(f"cannot ask any DNS server ({'; '.join(problems)})")

    def settle(name: str, attempt: int, lookup: Lookup) -> None:
        if lookup.exists is None and attempt + 1 < attempts:
            queue.append((name, attempt + 1))
        else:
            result[name] = lookup

    try:
        while queue or in_flight:
            while queue and len(in_flight) < window:
                name, attempt = queue.popleft()
                while next_id in in_flight:
                    next_id = (next_id + 1) & 0xFFFF
                query_id, next_id = next_id, (next_id + 1) & 0xFFFF
                try:
                    sockets[attempt % len(sockets)].send(build_query(name, TYPE_A, query_id))
                    QUERIES.sent += 1
                except OSError:
                    settle(name, attempt, Lookup(None))
                    continue
                in_flight[query_id] = (name, attempt, time.monotonic() + timeout)
            if not in_flight:
                continue
            wait_for = max(0.0, min(deadline for _, _, deadline in in_flight.values()) - time.monotonic())
            for key, _ in selector.select(wait_for):
                reader: socket.socket = key.data
                while True:
                    try:
                        message = reader.recv(65535)
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError:  # e.g. ICMP port unreachable: the query is lost, its deadline retries it
                        break
                    try:
                        ident, qname, lookup = parse_lookup_response(message)
                    except (ValueError, struct.error, IndexError):
                        continue
                    sent = in_flight.get(ident)
                    if sent is None or sent[0] != qname:
                        continue  # a late answer to a query already retried, or not ours
                    del in_flight[ident]
                    settle(sent[0], sent[1], lookup)
            now = time.monotonic()
            for ident, (name, attempt, deadline) in list(in_flight.items()):
                if deadline <= now:
                    del in_flight[ident]
                    settle(name, attempt, Lookup(None))
    finally:
        selector.close()
        for sock in sockets:
            sock.close()
    return result
