"""Value formats the API server checks (quantities, CIDRs, resources): kompi checks them first.

Each function returns what is wrong with a value, as the "expected ..." of a one-line error, or None.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

# Kubernetes' quantity grammar, non-negative: a number, then a binary or decimal SI suffix or an exponent.
QUANTITY = re.compile(
    r"^\+?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
)
QUANTITY_EXPECTED = "a Kubernetes quantity such as 500m, 2 or 4Gi"
RESOURCES_EXPECTED = "an object with requests/limits maps of quantities, e.g. {limits: {memory: 2Gi}}"


def quantity_problem(value: str) -> str | None:
    return None if QUANTITY.match(value) else QUANTITY_EXPECTED


def cidr_problem(value: str) -> str | None:
    try:
        # strict=False: host bits may be set (10.1.2.3/8), as the API server accepts.
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return "a CIDR block such as 10.0.0.0/8 (an IPv4 or IPv6 address, a prefix length that fits it)"
    return None if "/" in value else "a CIDR block such as 10.0.0.0/8 (with its /prefix length)"


# Open MPI's *_if_include: a comma-separated list (no spaces: Open MPI does not strip them) of interface
# names, which it tells apart by their first letter, and IPv4 blocks a.b.c.d/n (it resolves no other CIDRs).
INTERFACE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,14}$")  # Linux: at most 15 characters
INTERFACES_EXPECTED = (
    "interface names or IPv4 CIDR blocks, comma-separated without spaces (e.g. ens5 or bond0.100,10.0.0.0/16)"
)


def _interface_problem(item: str) -> str | None:
    if INTERFACE_NAME.match(item):
        return None
    if not item:
        return "an empty entry"
    try:
        network = ipaddress.ip_network(item, strict=False)
    except ValueError:
        return (
            f"'{item}' is neither an interface name (a letter, then at most 14 letters, digits, '.', '_' or '-') "
            "nor an IPv4 CIDR block"
        )
    if network.version != 4:
        return f"'{item}' is IPv6: Open MPI selects interfaces by IPv4 blocks only (name the interface instead)"
    return None if "/" in item else f"'{item}' has no /prefix length"


def interfaces_problem(value: str) -> str | None:
    for item in value.split(","):
        problem = _interface_problem(item)
        if problem:
            return f"{INTERFACES_EXPECTED}: {problem}"
    return None


def resources_problem(value: dict[str, Any]) -> str | None:
    """requests/limits maps of quantities: the builders merge into them (GPU limits)."""
    if set(value) - {"requests", "limits", "claims"}:
        return RESOURCES_EXPECTED
    for section in ("requests", "limits"):
        amounts = value.get(section, {})
        if not isinstance(amounts, dict):
            return RESOURCES_EXPECTED
        for name, amount in amounts.items():
            if isinstance(amount, bool) or not isinstance(amount, int | str) or quantity_problem(str(amount)):
                return f"{section}.{name} to be {QUANTITY_EXPECTED}, not {json.dumps(amount)}"
    return None
