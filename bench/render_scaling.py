"""Program construction and render time at workers = 1, 64 and 4096, measured in one run.

kompi's objects do not multiply with the worker count (one StatefulSet, whatever its replicas), so the
time must not either: T(4096) / T(1) <= 1.2 for both. Run: venv/bin/python bench/render_scaling.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scaling_report import report
from kompi_components.render import render_objects, to_yaml
from tests.pulumi_mocks import run_program
from tests.stacks import EVERY_FEATURE, as_config

WORKERS = (1, 64, 4096)
ROUNDS = 15
LIMIT = 1.2


def _render(config: dict[str, str]) -> None:
    to_yaml(render_objects(config))


def _construct(config: dict[str, str]) -> None:
    asyncio.set_event_loop(asyncio.new_event_loop())
    run_program(config)


def _median_seconds(action: Callable[[dict[str, str]], None]) -> dict[int, float]:
    configs = {n: as_config(EVERY_FEATURE | {"workers": n}) for n in WORKERS}
    for config in configs.values():
        action(config)  # warm-up: imports and caches
    samples: dict[int, list[float]] = {n: [] for n in WORKERS}
    # Interleave the sizes round by round so that machine noise hits all of them alike.
    for _ in range(ROUNDS):
        for n, config in configs.items():
            start = time.perf_counter()
            action(config)
            samples[n].append(time.perf_counter() - start)
    return {n: statistics.median(times) for n, times in samples.items()}


def main() -> int:
    failed = False
    for label, action in (("render", _render), ("program construction (Pulumi mocks)", _construct)):
        failed |= report(label, _median_seconds(action), LIMIT, lambda seconds: f"{seconds * 1000:.1f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
