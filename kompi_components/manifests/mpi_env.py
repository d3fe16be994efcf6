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

from kompi_components import contract
from kompi_components.config.formats import INTERFACE_NAME
from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.quantities import pod_requests

YIELD_WHEN_IDLE = "OMPI_MCA_mpi_yield_when_idle"
# The interfaces of MPI traffic (btl) and of the runtime's own (oob: Open MPI 4's ORTE, Open MPI 5's PRRTE).
# The image's MCA files name eth0, the pod's interface; the environment wins over them, and each Open MPI
# ignores the names of the other.
IF_INCLUDE = ("OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_oob_tcp_if_include", "PRTE_MCA_oob_tcp_if_include")
# NCCL's socket interfaces: the CUDA image names eth0, which on the node's network is rarely the node's interface.
# NCCL takes names (a leading = makes them exact) but no CIDR blocks: with a block among mpiInterfaces it gets
# the exclusion NCCL applies itself when left to choose (^: any interface but loopback and docker bridges).
NCCL_SOCKET_IFNAME = "NCCL_SOCKET_IFNAME"
NCCL_ANY_BUT_LOCAL = "^lo,docker"
# PyTorch's, on the node's network, where the host name may resolve to 127.0.1.1 (Debian's and Ubuntu's /etc/hosts,
# which a host-network pod reads): kompi_torch takes rank 0's address and gloo's interface from the interfaces
# (contract.ENV_MPI_INTERFACES). gloo itself takes GLOO_SOCKET_IFNAME as the pod has it, for torchrun or any other
# launcher, but only as interface names that every node has (it uses each one): set for a single name only.
GLOO_SOCKET_IFNAME = "GLOO_SOCKET_IFNAME"


def _cpus_short(resources: Mapping[str, Any], slots: int) -> bool:
    cpus = pod_requests(resources).get("cpu")
    return cpus is None or cpus < slots


def oversubscribed(config: KompiConfig) -> bool:
    """Whether a pod that runs ranks may have fewer CPUs than its slots."""
    rank_pods = [config.worker_pod.resources]
    if config.master_pod.compute:
        rank_pods.append(config.master_pod.resources)
    return any(_cpus_short(resources, config.slots) for resources in rank_pods)


def interface_env(config: KompiConfig) -> dict[str, str]:
    """kompi:hostNetwork.mpiInterfaces for Open MPI, NCCL and PyTorch; none on the pod network, where eth0 is right."""
    interfaces = config.host_network.mpi_interfaces
    if not config.host_network.enabled or interfaces is None:
        return {}
    items = interfaces.split(",")
    named = all(INTERFACE_NAME.match(item) for item in items)
    env = dict.fromkeys(IF_INCLUDE, interfaces) | {
        NCCL_SOCKET_IFNAME: f"={interfaces}" if named else NCCL_ANY_BUT_LOCAL
    }
    env[contract.ENV_MPI_INTERFACES] = interfaces
    if named and len(items) == 1:
        env[GLOO_SOCKET_IFNAME] = interfaces
    return env


def mpi_env(config: KompiConfig) -> dict[str, str]:
    """Environment for every kompi pod; the same on all of them, since mpiexec forwards its own to the ranks."""
    return ({YIELD_WHEN_IDLE: "1"} if oversubscribed(config) else {}) | interface_env(config)
