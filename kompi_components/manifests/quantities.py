"""Kubernetes resource quantities, exactly: parse, add up, print (for a gang's total resources)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from kompi_components.config.formats import QUANTITY  # the one grammar: the schema checks with it too

_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
# bytes print with the largest binary suffix that keeps the number whole, counts plain or in milli (cpu)
_PRINT_ORDER = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")


def parse(value: object) -> Fraction:
    """A quantity as an exact number of base units; the schema has already refused malformed ones."""
    found = QUANTITY.match(str(value).strip())
    if found is None:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    suffix = found["suffix"] or ""
    scale = Fraction(10) ** int(suffix[1:]) if suffix[:1] in ("e", "E") else _SUFFIXES[suffix]
    return Fraction(found["number"]) * scale


def format_quantity(amount: Fraction, *, in_bytes: bool = False) -> str:
    for suffix in _PRINT_ORDER if in_bytes else ():
        scaled = amount / _SUFFIXES[suffix]
        if scaled.denominator == 1 and scaled >= 1:
            return f"{scaled.numerator}{suffix}"
    if amount.denominator == 1:
        return str(amount.numerator)
    # the API server rounds anything finer than milli up, as kubectl would show it
    milli = -(-amount.numerator * 1000 // amount.denominator)
    return f"{milli}m"


def pod_requests(resources: Mapping[str, Any]) -> dict[str, Fraction]:
    """What the scheduler counts for a container: its requests, and a limit where the request is left out
    (the API server defaults such a request to the limit)."""
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    return {name: parse(value) for name, value in (dict(limits) | dict(requests)).items()}


def total(parts: Iterable[tuple[int, Mapping[str, Fraction]]]) -> dict[str, str]:
    """The sum of ``count`` times each part, printed; resources that add up to nothing are left out."""
    sums: dict[str, Fraction] = {}
    for count, part in parts:
        for name, amount in part.items():
            sums[name] = sums.get(name, Fraction(0)) + count * amount
    return {
        name: format_quantity(amount, in_bytes=_in_bytes(name)) for name, amount in sorted(sums.items()) if amount > 0
    }


def _in_bytes(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")
