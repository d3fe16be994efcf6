"""GPUs come from kompi:gpusPerWorker alone; a compute master gets a worker's GPUs with its slots."""

from __future__ import annotations

from typing import Any

from kompi_components.render import render_objects
from tests.stacks import as_config


def _mpi_limits(values: dict[str, object]) -> dict[str, dict[str, Any]]:
    """StatefulSet name -> the limits of its mpi container."""
    return {
        manifest["metadata"]["name"]: manifest["spec"]["template"]["spec"]["containers"][0]["resources"].get(
            "limits", {}
        )
        for manifest in render_objects(as_config({"clusterName": "g"} | values))
        if manifest["kind"] == "StatefulSet"
    }


def test_compute_master_gets_the_workers_gpus() -> None:
    limits = _mpi_limits(
        {"gpusPerWorker": 8, "masterPod": {"compute": True, "resources": {"limits": {"memory": "1Gi"}}}}
    )
    assert limits["g-worker"] == {"nvidia.com/gpu": 8}
    assert limits["g-master"] == {"memory": "1Gi", "nvidia.com/gpu": 8}


def test_launcher_only_master_gets_no_gpus() -> None:
    assert "nvidia.com/gpu" not in _mpi_limits({"gpusPerWorker": 8})["g-master"]


def test_the_same_gpu_count_in_worker_limits_is_accepted() -> None:
    limits = _mpi_limits({"gpusPerWorker": 2, "workerPod": {"resources": {"limits": {"nvidia.com/gpu": 2}}}})
    assert limits["g-worker"] == {"nvidia.com/gpu": 2}
