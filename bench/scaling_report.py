"""The verdict line of the scaling benchmarks: T(largest)/T(smallest) against a limit."""

from __future__ import annotations

from collections.abc import Callable


def report(label: str, times: dict[int, float], limit: float, show: Callable[[float], str]) -> bool:
    """Print one line with every T(n) and the ratio; True when the ratio is over ``limit``."""
    sizes = list(times)
    ratio = times[sizes[-1]] / times[sizes[0]]
    figures = ", ".join(f"T({n})={show(seconds)}" for n, seconds in times.items())
    verdict = "ok" if ratio <= limit else f"OVER the {limit} limit"
    print(f"{label}: {figures}; T({sizes[-1]})/T({sizes[0]}) = {ratio:.3f} ({verdict})")
    return ratio > limit
