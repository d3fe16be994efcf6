"""Open MPI settings that kompi derives from the stack (the image holds the fixed ones).

Open MPI busy-polls while a rank waits unless it knows the node is oversubscribed, and it only knows
that from the hostfile's slots, never from the CPUs Kubernetes gives a pod. A pod whose CPU request
(or limit) is below its slots, or that has none, may share its cores with other ranks; busy-polling
ranks then wait for each other's time slices. bench/images/vs_native.py, 4 ranks in 4 pods on 2 cores:
8 B allreduce 22.8 ms polling, 0.42 ms yielding (native Open MPI oversubscribed, which yields: 1.06 ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.quantities import pod_requests

YIELD_WHEN_IDLE = "OMPI_MCA_mpi_yield_when_idle"


def _cpus_short(resources: Mapping[str, Any], slots: int) -> bool:
    cpus = pod_requests(resources).get("cpu")
    return cpus is None or cpus < slots


def oversubscribed(config: KompiConfig) -> bool:
    """Whether a pod that runs ranks may have fewer CPUs than its slots."""
    rank_pods = [config.worker_pod.resources]
    if config.master_pod.compute:
        rank_pods.append(config.master_pod.resources)
    return any(_cpus_short(resources, config.slots) for resources in rank_pods)


def mpi_env(config: KompiConfig) -> dict[str, str]:
    """Environment for every kompi pod; the same on all of them, since mpiexec forwards its own to the ranks."""
    return {YIELD_WHEN_IDLE: "1"} if oversubscribed(config) else {}
