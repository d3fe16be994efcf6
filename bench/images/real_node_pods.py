"""kompi's side of bench/images/vs_native.py on the local cluster's real node.

The pods are what `kompi up` makes of the dev stack on a real kubelet (containerd, runc, the bridge CNI):
one slot per worker, each worker requesting its share of the cores (enforced by the kubelet's cgroups,
unlike podman's), the master requesting none so that the workers' shares fit on the node. The benchmark
program reaches the ranks as `python3 -c`, so no pod needs a copy of it.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from kompi_engine.build.engine import build_engine
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.node.mpi import run_in
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

Run = Callable[[Sequence[str]], str]
MASTER_POD = {"resources": {"requests": {"cpu": "0", "memory": "64Mi"}, "limits": {"memory": "1Gi"}}}


class RealNodePods:
    """One local cluster with a real node for the whole benchmark; one `kompi up` per job shape."""

    def __init__(self, cluster: LocalCluster, root: Path) -> None:
        self.cluster, self.root = cluster, root
        self.kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)

    @contextmanager
    def job(self, image: str, ranks: int, cpu_request: str, program: str) -> Iterator[Run]:
        """``ranks`` workers of ``image``; yields a function that runs ``program`` over them once."""
        tag = image.rsplit(":", 1)[1]
        project = Project.copy_of("dev", self.root / f"{tag}-{ranks}", self.cluster.kubeconfig)
        worker_pod = {"resources": {"requests": {"cpu": cpu_request, "memory": "256Mi"}, "limits": {"memory": "2Gi"}}}
        project.set(workers=ranks, imageTag=tag, masterPod=MASTER_POD, workerPod=worker_pod)
        outputs = project.last_json(project.kompi("up"))
        try:
            yield lambda env: self._run(outputs["namespace"], outputs["masterPod"], ranks, program, env)
        finally:
            project.kompi("destroy")

    def _run(self, namespace: str, master: str, ranks: int, program: str, env: Sequence[str]) -> str:
        command = ["env", *env, "mpiexec", "-n", str(ranks), "python3", "-c", program]
        result = run_in(self.kubectl, namespace, master, *command, timeout=900)
        if result.returncode != 0:
            raise RuntimeError(f"{shlex.join(command[:6])} on the real node failed:\n{result.stderr[-3000:]}")
        return result.stdout


@contextmanager
def real_node_pods(images: Sequence[str]) -> Iterator[RealNodePods]:
    """The local cluster with one real node, ``images`` loaded into its containerd; down afterwards."""
    with tempfile.TemporaryDirectory(prefix="kompi-bench-vs-native-") as scratch:
        root = Path(scratch)
        cluster = LocalCluster(
            state=root / "cluster",
            bin=build_engine().bin,
            ports=PortBlock.BENCH_REAL_NODE.ports,
            real_node=True,
            node_images=tuple(images),
        )
        cluster.up()
        try:
            yield RealNodePods(cluster, root)
        finally:
            cluster.down()
