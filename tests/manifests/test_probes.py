"""The sshd check runs every second until the pod is first ready, then every 10 s (it costs sshd a fork)."""

from __future__ import annotations

from kompi_components import contract
from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.ssh_identity import placeholder_secret_data
from tests.stacks import as_config


def test_startup_probe_is_fast_and_readiness_probe_is_sparse() -> None:
    objects = build_cluster(load_config(as_config({})), placeholder_secret_data())
    for statefulset in (item.manifest for item in (*objects.master, *objects.workers)):
        (container,) = statefulset["spec"]["template"]["spec"]["containers"]
        startup, readiness = container["startupProbe"], container["readinessProbe"]
        assert startup["exec"] == readiness["exec"] == {"command": [contract.READY_PROBE]}
        assert (startup["periodSeconds"], readiness["periodSeconds"]) == (1, 10)
        # A slow start must not restart the container: 5 minutes of failed checks first.
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 300
