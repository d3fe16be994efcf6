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
