"""kompi's kwok stage that makes a fake pod take as long to start as a container would.

kwok's own pod-ready stage makes a Pending pod Running and Ready at once. Benchmarks of rollouts need
the pods to take time, as pulling and starting a container does; this stage does what pod-ready does
after ``seconds``. kwok picks among stages that match the same pod by weight, and the stock stages
weigh 0, so this one (weight 1) always wins where it is configured. It reports one pod IP: kwok hands a
StatefulSet pod recreated under the same name a second address, and the API server refuses two of a family.
"""

from __future__ import annotations

from typing import Any

NAME = "kompi-pod-start-delay"

_STATUS = """\
{{ $now := Now }}
conditions:
- {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
containerStatuses:
{{ range .spec.containers }}
- {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: true, restartCount: 0,
   state: {running: {startedAt: {{ $now | Quote }}}}}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: true, restartCount: 0,
   state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }},
   finishedAt: {{ $now | Quote }}}}}
{{ end }}
{{ with PodIPsWith .spec.nodeName false .metadata.uid .metadata.name .metadata.namespace }}
podIP: {{ index . 0 | Quote }}
podIPs:
- {ip: {{ index . 0 | Quote }}}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
"""


def start_delay_stage(seconds: float) -> dict[str, Any]:
    """The Stage: a Pending, not yet Ready pod becomes Running and Ready ``seconds`` after it appeared."""
    pending_not_ready: list[dict[str, Any]] = [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Pending"]},
        {
            "key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
            "operator": "NotIn",
            "values": ["True"],
        },
    ]
    return pod_stage(NAME, pending_not_ready, seconds, _STATUS)


def pod_stage(name: str, selector: list[dict[str, Any]], seconds: float, status: str) -> dict[str, Any]:
    """A kwok Stage of kompi's own: a pod that matches ``selector`` gets ``status`` ``seconds`` later. It weighs 1,
    so kwok takes it over its stock stages (weight 0) for the same pod."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {"matchExpressions": selector},
            "weight": 1,
            "delay": {"durationMilliseconds": int(seconds * 1000)},
            "next": {"statusTemplate": status},
        },
    }
