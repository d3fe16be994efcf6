"""kompi's kwok stage that keeps a one-shot run's launcher running, as a long command would.

kwok's own pod-complete stage makes every Running pod of a Job Succeeded at once, so on fake nodes a one-shot
run ends as soon as Kueue admits it and nothing of a run in progress (a preemption, a lost launcher) can be
tried. Where it is configured, this stage completes the launcher (the Job pod of kompi's master) of the
clusters it names only ``seconds`` after it started running, like pod-complete. kwok picks among stages that
match the same pod by weight and the stock stages weigh 0, so this one (weight 1) wins; a launcher deleted
meanwhile no longer matches it and goes as any deleted pod. A data-preparation Job's pod is not a master: it
completes at once.
"""

from __future__ import annotations

from typing import Any

from kompi_engine.cluster.kwok_start_delay import pod_stage

NAME = "kompi-one-shot-launcher"

_SUCCEEDED = """\
{{ $now := Now }}
containerStatuses:
{{ range .spec.containers }}
- {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: false, restartCount: 0, started: false,
   state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }},
   finishedAt: {{ $now | Quote }}}}}
{{ end }}
phase: Succeeded
"""


def launcher_stage(seconds: float, clusters: tuple[str, ...]) -> dict[str, Any]:
    """The Stage: a Running master pod of a Job of one of ``clusters`` succeeds ``seconds`` after it started."""
    running_launcher: list[dict[str, Any]] = [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Running"]},
        {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]},
        {"key": '.metadata.labels["app.kubernetes.io/component"]', "operator": "In", "values": ["master"]},
        {"key": '.metadata.labels["app.kubernetes.io/instance"]', "operator": "In", "values": list(clusters)},
    ]
    return pod_stage(NAME, running_launcher, seconds, _SUCCEEDED)
