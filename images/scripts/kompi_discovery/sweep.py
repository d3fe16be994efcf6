"""A sweep: one round of DNS queries that says which workers are ready, and the list kept from sweep to sweep.

The SRV answer names ready workers; when it is cut, every ordinal up to the limit (and block by block past
the highest ready one) is looked up by name. A worker is listed at the first answer that says it is ready
and leaves the list only when DNS denied it in ``misses_to_drop`` sweeps in a row; no answer changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .cluster import Cluster
from .dns_client import QUERY_TIMEOUT, Lookup, Server, look_up, query_srv

# kompi:workers' maximum (kompi_components/config/schema.py; tests/discovery/test_discovery_unit.py holds
# the two equal). With a cut SRV answer every ordinal below it is looked up, whatever the highest ready one:
# the master cannot know the worker count (its pod template leaves it out, so that a scale never restarts
# the master; a ConfigMap mounted in its place would reach the pod up to a minute after a scale-up, and
# in that minute a ready worker behind late ones would be missing). Costs a sweep about 4,096 queries
# from the first cut answer on (docs/scale.md), the cost of the largest cluster.
WORKERS_LIMIT = 4096
# Past the limit, ordinals are looked up to this far past the highest ready one (found block by block).
PROBE_MARGIN = 64
# Sweeps in a row that must deny a listed worker before it leaves the hostfile.
MISSES_TO_DROP = 3


@dataclass
class Sweep:
    """What one round of queries said about each worker it covered."""

    ready: set[int]
    denied: set[int]  # NXDOMAIN, and (with a whole SRV answer) absent from it too
    unanswered: set[int]  # looked up, no usable answer: neither ready nor denied
    cut: bool  # the SRV answer was cut, so workers were looked up one by one


@dataclass
class Discovery:
    """The ready workers as DNS reports them, kept from sweep to sweep.

    A worker joins the list at the first answer that says it is ready, and leaves it after
    ``misses_to_drop`` sweeps in a row denied it. When the SRV answer is cut, ordinals 0 to
    ``max(limit, expected) - 1`` are looked up (``expected``: kompi-wait's N), then block by block of
    ``margin`` while the last block held a ready worker.
    """

    cluster: Cluster
    servers: Sequence[Server] | None = None
    timeout: float = QUERY_TIMEOUT
    misses_to_drop: int = MISSES_TO_DROP
    margin: int = PROBE_MARGIN
    limit: int = WORKERS_LIMIT
    expected: int = 0
    listed: set[int] = field(default_factory=set)
    misses: dict[int, int] = field(default_factory=dict)
    addresses: dict[int, str] = field(default_factory=dict)  # of the ready workers, where DNS gave one
    port: int = 0  # the SRV records' port (the Service's one named port), once any has been seen
    last: Sweep | None = None

    def sweep(self) -> set[int]:
        """One round: the workers listed now. Raises DnsError (nothing changes) if the SRV query fails
        or no server can be asked about the names."""
        answer = query_srv(self.cluster.srv_name, self.servers, self.timeout)
        records = self.cluster.ready_workers(answer.records)
        self.port = next((record.port for record in answer.records), self.port)
        if answer.complete:
            # Absent from a whole answer: asked again by name before it counts as a miss.
            looked_up = self._look_up(self.listed - set(records))
        else:
            probed_to = max({*records, *self.listed, self.expected - 1, self.limit - 1})
            looked_up = self._look_up((self.listed | set(range(probed_to + 1))) - set(records))
            while True:  # one more block while the last margin held a ready worker
                found = {ordinal for ordinal, lookup in looked_up.items() if lookup.exists}
                reach = max({*records, *found}, default=-1) + self.margin
                if reach <= probed_to:
                    break
                looked_up |= self._look_up(range(probed_to + 1, reach + 1))
                probed_to = reach
        ready = set(records) | {ordinal for ordinal, lookup in looked_up.items() if lookup.exists}
        denied = {ordinal for ordinal, lookup in looked_up.items() if lookup.exists is False}
        unanswered = {ordinal for ordinal, lookup in looked_up.items() if lookup.exists is None}
        self.last = Sweep(ready, denied, unanswered, cut=not answer.complete)
        for ordinal, record in records.items():
            self.addresses[ordinal] = record.address or self.addresses.get(ordinal, "")
        for ordinal, lookup in looked_up.items():
            if lookup.exists:
                self.addresses[ordinal] = lookup.address or self.addresses.get(ordinal, "")
        for ordinal in ready:
            self.misses.pop(ordinal, None)
        self.listed |= ready
        for ordinal in denied & self.listed:
            self.misses[ordinal] = self.misses.get(ordinal, 0) + 1
            if self.misses[ordinal] >= self.misses_to_drop:
                self.listed.discard(ordinal)
                del self.misses[ordinal]
                self.addresses.pop(ordinal, None)
        return set(self.listed)

    def _look_up(self, ordinals: Iterable[int]) -> dict[int, Lookup]:
        by_name = {self.cluster.fqdn(ordinal): ordinal for ordinal in ordinals}
        if not by_name:
            return {}
        found = look_up(by_name, self.servers, self.timeout)
        return {by_name[name]: lookup for name, lookup in found.items()}

    def address(self, ordinals: Iterable[int]) -> dict[int, str]:
        """The addresses of listed workers, looked up for those that a cut SRV answer gave without one."""
        ordinals = list(ordinals)
        unknown = [ordinal for ordinal in ordinals if not self.addresses.get(ordinal)]
        for ordinal, lookup in self._look_up(unknown).items():
            if lookup.exists and lookup.address:
                self.addresses[ordinal] = lookup.address
        return {ordinal: self.addresses[ordinal] for ordinal in ordinals if self.addresses.get(ordinal)}
