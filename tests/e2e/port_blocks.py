"""The port block of every local cluster that the tests and benchmarks start, in one place.

Clusters alive at the same time must not share ports: the session's real-node cluster and a gang
test's cluster once both took ``Ports.shifted(2000)``, and the gang test failed on a port in use.
Every default port differs from the others modulo 1000, so distinct offsets never collide.
KOMPI_TEST_PORT_SHIFT (0 or 500) moves every block, so that two test sessions can run on one machine at
once (e.g. two developers' checkouts), and each pytest-xdist worker of a session adds 100 times its
number (bin/test runs the kwok tests on two workers): tests/unit/test_port_blocks.py proves the four
shifts 0, 100, 500 and 600 apart; a third worker's 200 would meet a port of the second session's.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping

from kompi_engine.cluster.ports import Ports

SESSION_SHIFTS = (0, 500)
WORKERS = 2  # pytest-xdist workers per session, each with blocks of its own


@enum.unique  # a block named twice is an import error, not a flaky test
class PortBlock(enum.IntEnum):
    # the default ports (offset 0) are a user's own `kompi local up`
    KWOK_SESSION = 1000  # tests/e2e/conftest.py, alive for the whole session
    REAL_NODE_SESSION = 2000  # tests/e2e/node/conftest.py, alive for that package
    GANG_TOO_SMALL = 3000  # tests/e2e/test_gang.py
    GANG_ROOMY = 4000  # tests/e2e/test_gang.py
    BENCH_ENGINE_UP = 5000  # bench/engine_up.py
    BENCH_REAL_NODE = 6000  # bench/real_node.py
    BENCH_ROLLOUT = 8000  # bench/rollout.py
    SIGNALS = 7000  # tests/e2e/test_signals.py: the cluster `kompi up --local` starts itself
    RESTARTS = 9000  # tests/e2e/test_local_restart.py
    LOST_NODES = 10000  # tests/e2e/test_lost_node.py
    FIRST_RUN = 11000  # tests/e2e/node/test_first_run.py: the real node `kompi up --local` starts itself
    SEVERAL_NODES = 12000  # tests/e2e/nodes/conftest.py: three real nodes, for that package
    BENCH_NODES = 13000  # bench/nodes.py: real nodes across a link, native against kompi
    BENCH_DISCOVERY = 14000  # bench/discovery_scale.py: a stock CoreDNS over thousands of endpoints
    BENCH_LAUNCH = 15000  # bench/launch.py: mpiexec over many workers on the real node
    TRAINING = 16000  # tests/e2e/training/conftest.py: the real node that runs the training image
    BENCH_TRAINING = 17000  # bench/training.py: the training image in kompi's pods against the same natively;
    # bench/recovery.py too (benchmarks run one at a time)
    QUEUE = 18000  # tests/e2e/test_queue.py: Kueue over fake GPU nodes
    QUEUE_PLATFORM = 19000  # tests/e2e/test_queue_platform.py: Kueue with a platform's own settings

    @property
    def ports(self) -> Ports:
        return Ports.shifted(self.value + shift(os.environ))


def shift(environment: Mapping[str, str]) -> int:
    """The session's shift plus the pytest-xdist worker's (gw0: 0, gw1: 100); anything else is refused."""
    session = int(environment.get("KOMPI_TEST_PORT_SHIFT") or 0)
    if session not in SESSION_SHIFTS:
        raise ValueError(f"KOMPI_TEST_PORT_SHIFT={session}: expected one of {SESSION_SHIFTS}")
    worker = environment.get("PYTEST_XDIST_WORKER", "gw0")
    number = re.fullmatch(r"gw(\d+)", worker)
    if number is None or int(number[1]) >= WORKERS:
        raise ValueError(f"pytest-xdist worker {worker}: at most {WORKERS} workers (-n {WORKERS}) have port blocks")
    return session + 100 * int(number[1])
