"""A stack's whole config -> its ``kompi:*`` keys; a key that looks like a mistyped kompi key is refused.

Pulumi hands the program every namespace (``kubernetes:*``, ``pulumi:*``, ...) and kompi reads only
its own, so ``kompy:workers`` or a bare ``workers`` would otherwise be ignored without a word.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from kompi_components.config.errors import PREFIX, ConfigError
from kompi_components.config.keys import python_names
from kompi_components.config.schema import KompiConfig

EXAMPLE = f"{PREFIX}:workers"


def _close_key(name: str) -> str | None:
    known = list(python_names(KompiConfig))
    if name in known:
        return name
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close else None


def _looks_like_kompi(namespace: str) -> bool:
    return difflib.SequenceMatcher(None, namespace.lower(), PREFIX).ratio() >= 0.6


def kompi_config(values: Mapping[str, object]) -> dict[str, object]:
    """The ``kompi:*`` entries of ``values``; raises ConfigError for a bare key or a kompi key's typo."""
    selected: dict[str, object] = {}
    for key, value in values.items():
        namespace, colon, name = key.partition(":")
        if namespace == PREFIX and colon:
            selected[key] = value
            continue
        if not colon:
            close = _close_key(key)
            expected = f"{PREFIX}:{close}" if close else f"a key with its namespace, such as {EXAMPLE}"
            raise ConfigError(key, value, f"{expected} (stack config keys are namespace:name)", in_kompi=False)
        close = _close_key(name)
        if close and _looks_like_kompi(namespace):
            raise ConfigError(
                key, value, f"{PREFIX}:{close} (kompi reads only the {PREFIX}: namespace)", in_kompi=False
            )
    return selected
