"""kompi across several real nodes (bin/kompi local up --node real --nodes 3): MPI over the link between
nodes, native against kompi, and a node lost under a running cluster. Figures from one run.

    venv/bin/python bench/nodes.py mpi [--mtu 1500,9000] [--repeats 5] [ompi4 ompi5]
    venv/bin/python bench/nodes.py loss [--times 3]

``mpi``: for each link MTU, a cluster of three nodes; node 0 runs the launcher, nodes 1 and 2 one rank
each, so every message crosses the link. bench/images/mpi_bench.py (allreduce and ping-pong, 8 B and
4 MiB) runs three ways, alternating ``--repeats`` times, medians kept: natively (the same Open MPI
builds as the images, bench/images/native.py, as root in the nodes' network namespaces: mpiexec in node
0's, its daemons started in nodes 1 and 2's by netns_agent.py instead of ssh), as kompi on the pod
network (the default), and as kompi in host-network mode (kompi:hostNetwork). Each worker requests a
whole core, so Open MPI busy-polls in all three. Ratios are kompi/native.

``loss``: tests/e2e/nodes/node_loss.py's steps (a worker's node powers off, is taken out of service and
the worker is made again elsewhere), printing the seconds from the power-off to each step.

Run as root with the engine built and kompi's images in podman (images/build.sh ompi4 ompi5).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "images"))

from native import NativeMPI, native
from vs_native import METRICS, PROGRAM, Figures, build_images, figures

from kompi_engine.build.engine import build_engine
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import NODE_NAME
from tests.e2e.live import Kubectl
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import run_in
from tests.e2e.nodes.node_loss import lose_a_node
from tests.e2e.nodes.spread import spread_stack
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

AGENT = Path(__file__).with_name("netns_agent.py")
NODES = 3
ONE_CORE = {"resources": {"requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"memory": "2Gi"}}}
LAUNCHER = {"resources": {"requests": {"cpu": "0", "memory": "64Mi"}, "limits": {"memory": "1Gi"}}}
NOT_ON_THE_FIRST_NODE = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [NODE_NAME]}]}
            ]
        }
    }
}
Run = Callable[[], str]


@contextmanager
def cluster_of_nodes(images: Sequence[str], mtu: int) -> Iterator[LocalCluster]:
    with tempfile.TemporaryDirectory(prefix="kompi-bench-nodes-") as scratch:
        cluster = LocalCluster(
            state=Path(scratch) / "cluster",
            bin=build_engine().bin,
            ports=PortBlock.BENCH_NODES.ports,
            real_node=True,
            real_nodes=NODES,
            mtu=mtu,
            node_images=tuple(images),
        )
        cluster.up()
        try:
            yield cluster
        finally:
            cluster.down()


def native_across(cluster: LocalCluster, mpi: NativeMPI) -> Run:
    """mpiexec in node 0's namespace, one rank in each of nodes 1 and 2, over their eth0. Not bound to cores:
    the local nodes share the machine's, and each daemon would bind its rank to core 0 (as kompi's images
    say: a millisecond per message instead of tens of microseconds)."""
    ranks = cluster.real_node_list[1:]
    hostfile = cluster.state / "native-hostfile"
    hostfile.write_text("".join(f"{node.addresses.node_ip} slots=1\n" for node in ranks))
    netns = ",".join(f"{node.addresses.node_ip}={node.addresses.netns}" for node in ranks)
    options = ["--hostfile", str(hostfile), "--bind-to", "none", "--mca", "btl", "tcp,self"]
    options += ["--mca", "btl_tcp_if_include", "eth0"]
    if mpi.flavor == "ompi4":
        options += ["--mca", "plm_rsh_agent", str(AGENT), "--mca", "oob_tcp_if_include", "eth0"]
    else:
        options += ["--prtemca", "plm_ssh_agent", str(AGENT), "--prtemca", "oob_tcp_if_include", "eth0"]
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    command = [*cluster.node.in_netns, mpi.mpiexec, *root, *options, "-n", str(len(ranks)), mpi.python, str(PROGRAM)]
    env = {"KOMPI_BENCH_NETNS": netns, "PATH": f"{Path(mpi.mpiexec).parent}:{os.environ['PATH']}"}
    return lambda: mpi.run_command(command, env)


@contextmanager
def kompi_across(cluster: LocalCluster, root: Path, image: str, host_network: bool) -> Iterator[Run]:
    """A dev stack of two workers on nodes 1 and 2 and its master on node 0; one run of the program."""
    tag = image.rsplit(":", 1)[1]
    name = f"bench-{'host' if host_network else 'pods'}-{tag.split('.', 1)[0]}"
    project = Project.copy_of("dev", root / name, cluster.kubeconfig)
    settings: dict[str, object] = {
        "clusterName": name,
        "namespace": name,
        "workers": NODES - 1,
        "oneWorkerPerNode": True,
        "imageTag": tag,
        "masterPod": LAUNCHER | {"nodeSelector": {"kubernetes.io/hostname": NODE_NAME}},
        "workerPod": ONE_CORE | {"affinity": NOT_ON_THE_FIRST_NODE},
    }
    if host_network:
        subnet = f"{cluster.node.addresses.node_ip.rsplit('.', 1)[0]}.0/24"
        settings |= {"hostNetwork": {"enabled": True, "mpiInterfaces": subnet}, "networkPolicy": {"enabled": False}}
    project.set(**settings)
    outputs = project.last_json(project.kompi("up"))
    stack = Stack(Kubectl(cluster.bin / "kubectl", cluster.kubeconfig), cluster, tag, name, NODES - 1)
    command = ["mpiexec", "-n", str(NODES - 1), "python3", "-c", PROGRAM.read_text()]

    def run() -> str:
        result = run_in(stack.kubectl, outputs["namespace"], outputs["masterPod"], *command, timeout=900)
        if result.returncode != 0:
            raise RuntimeError(f"kompi {name} failed:\n{result.stderr[-3000:]}")
        return result.stdout

    try:
        yield run
    finally:
        project.kompi("destroy")


def medians(samples: Sequence[Figures]) -> Figures:
    return {label: statistics.median(sample[label] for sample in samples) for label, *_ in METRICS}


def measure_mpi(args: argparse.Namespace) -> None:
    images = build_images(args.flavors)
    print(f"cores {os.cpu_count()}, {NODES} real nodes, ranks on nodes 1 and 2; ratios are kompi/native (same run)")
    print(
        f"{'mtu':5} {'flavor':6} {'metric':22} {'native':>10} {'pods':>10} {'host net':>10} {'pods/n':>7} {'host/n':>7}"
    )
    for mtu in (int(value) for value in args.mtu.split(",")):
        with cluster_of_nodes(list(images.values()), mtu) as cluster, tempfile.TemporaryDirectory() as scratch:
            for flavor in args.flavors:
                with ExitStack() as stacks:
                    runs = {
                        "native": native_across(cluster, native(flavor)),
                        "pods": stacks.enter_context(kompi_across(cluster, Path(scratch), images[flavor], False)),
                        "host": stacks.enter_context(kompi_across(cluster, Path(scratch), images[flavor], True)),
                    }
                    samples: dict[str, list[Figures]] = {way: [] for way in runs}
                    for _ in range(args.repeats):
                        for way, run in runs.items():
                            samples[way].append(figures(run()))
                result = {way: medians(values) for way, values in samples.items()}
                for label, *_ in METRICS:
                    n, p, h = (result[way][label] for way in ("native", "pods", "host"))
                    print(f"{mtu:5} {flavor:6} {label:22} {n:10.1f} {p:10.1f} {h:10.1f} {p / n:7.2f} {h / n:7.2f}")


def measure_loss(args: argparse.Namespace) -> None:
    images = build_images(["ompi5"])
    with cluster_of_nodes(list(images.values()), 1500) as cluster, tempfile.TemporaryDirectory() as scratch:
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        project, stack = spread_stack(cluster, kubectl, Path(scratch) / "dev", "kompi-loss", images["ompi5"], 2)
        project.kompi("up")
        try:
            stack.every_worker_ready()
            for attempt in range(args.times):
                print(f"# {attempt + 1}: {lose_a_node(stack, log=lambda _: None)}")
                stack.every_worker_ready()
        finally:
            project.kompi("destroy")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    mpi = commands.add_parser("mpi", help="native against kompi across nodes")
    mpi.add_argument("flavors", nargs="*", choices=["ompi4", "ompi5", []])
    mpi.add_argument("--mtu", default="1500,9000")
    mpi.add_argument("--repeats", type=int, default=5)
    loss = commands.add_parser("loss", help="a node lost under a running cluster")
    loss.add_argument("--times", type=int, default=3)
    args = parser.parse_args(argv)
    if args.command == "mpi":
        args.flavors = args.flavors or ["ompi4", "ompi5"]
    return args


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    (measure_mpi if args.command == "mpi" else measure_loss)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
