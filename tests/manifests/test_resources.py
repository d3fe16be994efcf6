"""User resources reach the pods intact (claims included) with the GPU limit added, config untouched."""

from __future__ import annotations

from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.ssh_identity import placeholder_secret_data
from tests.stacks import as_config


def test_worker_resources_keep_claims_and_gain_the_gpu_limit() -> None:
    resources = {"limits": {"memory": "1Gi"}, "claims": [{"name": "gpu"}]}
    config = load_config(as_config({"gpusPerWorker": 2, "workerPod": {"resources": resources}}))
    objects = build_cluster(config, placeholder_secret_data())
    (container,) = objects.workers[0].manifest["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == {"limits": {"memory": "1Gi", "nvidia.com/gpu": 2}, "claims": [{"name": "gpu"}]}
    assert config.worker_pod.resources == resources  # the builders copy before they add
