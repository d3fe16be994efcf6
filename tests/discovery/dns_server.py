"""A small authoritative DNS server (dnspython, UDP) publishing what cluster DNS would for ready pods.

For the headless Service with publishNotReadyAddresses false, Kubernetes DNS answers
``_ssh._tcp.<service domain>`` SRV with one record per ready endpoint (target = the pod's FQDN) and
``<pod>.<service domain>`` A with its address; names of pods that are not ready do not exist.
The test calls ``publish``/``withdraw`` as readiness changes and gets the time each change is visible.
"""

from __future__ import annotations

import socket
import threading
import time

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

TTL = 0  # what CoreDNS's kubernetes plugin gives headless records by default is 5 s; 0 keeps tests honest


class ClusterDns:
    def __init__(self, address: str, service_domain: str, port_name: str = "ssh", port: int = 2222) -> None:
        self.service_domain = service_domain.rstrip(".").lower()
        self.srv_name = f"_{port_name}._tcp.{self.service_domain}"
        self.port = port
        self._pods: dict[str, str] = {}  # FQDN -> address of ready pods
        self._lock = threading.Lock()
        self._address = address
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self.queries = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def publish(self, fqdn: str, address: str) -> float:
        with self._lock:
            self._pods[fqdn.lower()] = address
            return time.time()

    def withdraw(self, fqdn: str) -> float:
        with self._lock:
            self._pods.pop(fqdn.lower(), None)
            return time.time()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()

    def answer(self, wire: bytes) -> bytes:
        request = dns.message.from_wire(wire)
        response = dns.message.make_response(request)
        response.flags |= dns.flags.AA
        question = request.question[0]
        name = question.name.to_text().rstrip(".").lower()
        with self._lock:
            pods = dict(self._pods)
        if name == self.srv_name and pods:
            if question.rdtype in (dns.rdatatype.SRV, dns.rdatatype.ANY):
                records = [f"0 {100 // len(pods)} {self.port} {fqdn}." for fqdn in sorted(pods)]
                response.answer.append(dns.rrset.from_text_list(question.name, TTL, "IN", "SRV", records))
        elif name in pods:
            if question.rdtype == dns.rdatatype.A:
                response.answer.append(dns.rrset.from_text(question.name, TTL, "IN", "A", pods[name]))
        else:
            response.set_rcode(dns.rcode.NXDOMAIN)
        return response.to_wire()

    def _bind(self) -> bool:
        # podman gives the bridge its gateway address only when the first container joins.
        while not self._stop.is_set():
            try:
                self._sock.bind((self._address, 53))
                return True
            except OSError:
                time.sleep(0.01)
        return False

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
                self._sock.sendto(self.answer(wire), client)
            except Exception:
                continue
