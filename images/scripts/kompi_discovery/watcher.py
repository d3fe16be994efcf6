"""The master's watcher, `kompi-discover watch`: a sweep every interval, the hostfile rewritten when the list
changes; and `kompi-discover once`: one sweep, the hostfile on stdout only when every name was answered."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from .cluster import write_atomically
from .dns_client import QUERIES, DnsError
from .log import log
from .sweep import Discovery


def _report_queries(started: float) -> None:
    elapsed = max(time.monotonic() - started, 1e-9)
    log(f"stopping: {QUERIES.sent} DNS queries in {elapsed:.0f} s ({QUERIES.sent / elapsed:.1f}/s)")


def watch(discovery: Discovery, hostfile: Path, interval: float) -> None:
    """Rewrite the hostfile whenever the set of listed workers changes; runs until SIGTERM."""
    started = time.monotonic()

    def stop(*_: object) -> None:
        _report_queries(started)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    cluster = discovery.cluster
    current: str | None = None
    failing = False
    notes: tuple[bool, int] = (False, 0)  # what was last said about cut answers and unanswered lookups
    log(f"watching {cluster.srv_name} every {interval:g}s for {cluster.worker_prefix}-N into {hostfile}")
    while True:
        began = time.monotonic()
        text: str | None
        try:
            text = cluster.hostfile_text(discovery.sweep())
            if failing:
                log("DNS answers again")
            failing = False
        except DnsError as error:
            if not failing:
                log(f"keeping the hostfile: {error}")
            failing = True
            text = current
        sweep = discovery.last
        if not failing and sweep is not None and (sweep.cut, len(sweep.unanswered)) != notes:
            notes = (sweep.cut, len(sweep.unanswered))
            if sweep.cut:
                log("the SRV answer does not hold every worker: looking workers up by name")
            if sweep.unanswered:
                log(f"no answer for {len(sweep.unanswered)} workers' names: each kept as it was")
        if text is not None and text != current:
            write_atomically(hostfile, text)
            log(f"hostfile: {text.count(chr(10))} workers")
            current = text
        # After a failed query, ask again soon rather than a whole period later.
        pause = min(interval, 0.2) if failing else interval
        time.sleep(max(0.0, pause - (time.monotonic() - began)))


def once(discovery: Discovery) -> int:
    """Print the hostfile of the workers ready now: exact, or nothing and 1 (a worker may be missing)."""
    try:
        listed = discovery.sweep()
    except DnsError as error:
        log(str(error))
        return 1
    unanswered = discovery.last.unanswered if discovery.last else set()
    if unanswered:
        whose = "worker's name" if len(unanswered) == 1 else "workers' names"
        first = discovery.cluster.fqdn(min(unanswered))
        log(f"no answer for {len(unanswered)} {whose} (first {first}): the hostfile could be short")
        return 1
    sys.stdout.write(discovery.cluster.hostfile_text(listed))
    return 0
