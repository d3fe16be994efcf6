"""The API server's write requests over a step, from its own counters (apiserver_request_total in /metrics)."""

from __future__ import annotations

import re
from collections import Counter

from tests.e2e.live import Kubectl

WRITE_VERBS = frozenset({"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"})  # as the metric names them
_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def write_counts(kubectl: Kubectl) -> Counter[str]:
    """Write requests so far, by ``resource[/subresource] VERB`` (e.g. ``pods/binding POST``), with
    `` refused`` after those the API server answered with an error (a conflict, an invalid patch)."""
    counts: Counter[str] = Counter()
    for line in kubectl.run("get", "--raw", "/metrics").stdout.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None:
            continue
        labels = dict(_LABEL.findall(sample["labels"]))
        if labels.get("verb") not in WRITE_VERBS:
            continue
        resource = labels.get("resource", "") + (f"/{labels['subresource']}" if labels.get("subresource") else "")
        refused = " refused" if labels.get("code", "").startswith(("4", "5")) else ""  # a conflict, say
        counts[f"{resource} {labels['verb']}{refused}"] += int(float(sample["value"]))
    return counts


def writes_between(before: Counter[str], after: Counter[str]) -> Counter[str]:
    """The writes made between two readings (only those that happened)."""
    return Counter({key: after[key] - before[key] for key in after if after[key] > before[key]})


def summary(writes: Counter[str], workers: int, top: int = 6) -> str:
    """``N writes (x per worker): the largest kinds``, for one line of a benchmark's output."""
    total = sum(writes.values())
    largest = ", ".join(f"{key} {count}" for key, count in writes.most_common(top))
    return f"{total} API writes ({total / max(1, workers):.1f} per worker): {largest}"
