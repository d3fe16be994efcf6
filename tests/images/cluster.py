"""A kompi cluster as podman containers, from the objects kompi itself renders.

The worker and master StatefulSets and the SSH Secret come from kompi_components (config loading,
key derivation, manifest builders); each pod becomes a container via ``run_pod_like`` on a private
podman network, with the pod hostname and the FQDNs that the headless Service gives in Kubernetes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.naming import Names, cluster_names
from kompi_components.ssh_identity import SEED_BYTES, identity_files
from tests.images.pod_like import PodPlacement, run_pod_like, wait_ready
from tests.images.podman import Network, exec_in, network, unique

CLUSTER = "mpi"
NAMESPACE = "hpc"
FIRST_HOST = 10  # pods get <subnet>.10, .11, ...


@dataclass(frozen=True)
class Pod:
    """One pod of a rendered StatefulSet: its name, FQDN and spec (hostname/subdomain set)."""

    name: str
    fqdn: str
    spec: dict[str, Any]

    @property
    def container(self) -> dict[str, Any]:
        return self.spec["containers"][0]

    @property
    def user(self) -> str:
        """``uid:gid`` the pod runs as (for ``podman exec --user``)."""
        context = self.spec["securityContext"]
        return f"{context['runAsUser']}:{context['runAsGroup']}"


@dataclass(frozen=True)
class RenderedCluster:
    names: Names
    secrets: dict[str, dict[str, str]]
    workers: list[Pod]
    master: Pod


def secret_files(objects: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    return {obj["metadata"]["name"]: dict(obj["stringData"]) for obj in objects if obj["kind"] == "Secret"}


def statefulset_pods(statefulset: Mapping[str, Any], names: Names) -> list[Pod]:
    """The pods the StatefulSet controller would create: hostname = pod name, subdomain = service."""
    base = statefulset["metadata"]["name"]
    spec = statefulset["spec"]
    pods = []
    for ordinal in range(spec["replicas"]):
        name = f"{base}-{ordinal}"
        pod_spec = {**spec["template"]["spec"], "hostname": name, "subdomain": spec["serviceName"]}
        pods.append(Pod(name, f"{name}.{names.service_domain}", pod_spec))
    return pods


def render_cluster(
    image: str,
    *,
    workers: int,
    run_as_root: bool,
    cluster: str = CLUSTER,
    master_computes: bool = False,
    config: Mapping[str, str] | None = None,
) -> RenderedCluster:
    """kompi's objects for a cluster of ``workers`` running ``image``, with fresh SSH keys.

    ``config`` adds stack keys (``kompi:...`` strings, as in a stack file).
    """
    repository, tag = image.rsplit(":", 1)
    raw = {
        "kompi:clusterName": cluster,
        "kompi:namespace": NAMESPACE,
        "kompi:workers": str(workers),
        "kompi:image": repository,
        "kompi:imageTag": tag,
        "kompi:imagePullPolicy": "Never",
        "kompi:runAsRoot": json.dumps(run_as_root),
        "kompi:masterPod": json.dumps({"compute": master_computes}),
        **(config or {}),
    }
    loaded = load_config(raw)
    names = cluster_names(loaded)
    files = identity_files(os.urandom(SEED_BYTES), os.urandom(SEED_BYTES), names.cluster, names.known_host_patterns())
    objects = build_cluster(loaded, files.as_secret_data())
    (master,) = statefulset_pods(objects.master[0].manifest, names)
    workers = statefulset_pods(objects.workers[0].manifest, names)
    return RenderedCluster(names, secret_files([item.manifest for item in objects.ssh]), workers, master)


@dataclass(frozen=True)
class RunningCluster:
    rendered: RenderedCluster
    network: Network
    containers: dict[str, str]  # pod name -> podman container name
    addresses: dict[str, str]  # pod name -> IP
    ready_seconds: float

    @property
    def master(self) -> str:
        return self.containers[self.rendered.master.name]

    def container(self, pod: str) -> str:
        return self.containers[pod]


def placements(pods: Sequence[Pod], net: Network, aliases: Mapping[str, str]) -> dict[str, PodPlacement]:
    """Addresses and /etc/hosts entries: every pod's FQDN resolves in every pod (cluster DNS).

    ``aliases`` maps more host names to pod names; they resolve to that pod's address.
    """
    addresses = {pod.name: net.address(FIRST_HOST + index) for index, pod in enumerate(pods)}
    hosts = {pod.fqdn: addresses[pod.name] for pod in pods}
    hosts |= {alias: addresses[pod] for alias, pod in aliases.items()}
    return {
        pod.name: PodPlacement(unique(f"kompi-{pod.name}"), pod.name, net, addresses[pod.name], hosts) for pod in pods
    }


def start_pods(
    pods: Sequence[Pod],
    secrets: Mapping[str, Mapping[str, str]],
    places: Mapping[str, PodPlacement],
    scratch: Path,
    extra_mounts: Sequence[str],
) -> tuple[dict[str, str], float]:
    """Start every pod, then wait until each one's readiness probe passes."""
    containers = {
        pod.name: run_pod_like(pod.spec, pod.container, secrets, places[pod.name], scratch / pod.name, extra_mounts)
        for pod in pods
    }
    ready = max(wait_ready(containers[pod.name], pod.container) for pod in pods)
    return containers, ready


@contextmanager
def running_cluster(
    rendered: RenderedCluster,
    scratch: Path,
    *,
    extra_mounts: Sequence[str] = (),
    extra_pods: Sequence[tuple[Pod, Mapping[str, Mapping[str, str]]]] = (),
    aliases: Mapping[str, str] | None = None,
) -> Iterator[RunningCluster]:
    """Workers, master and ``extra_pods`` (pod, its own secrets) on a new network, removed afterwards."""
    own = [*rendered.workers, rendered.master]
    with network() as net:
        places = placements([*own, *(pod for pod, _ in extra_pods)], net, aliases or {})
        containers, ready = start_pods(own, rendered.secrets, places, scratch, extra_mounts)
        for pod, secrets in extra_pods:
            containers |= start_pods([pod], secrets, places, scratch, extra_mounts)[0]
        addresses = {name: place.ip for name, place in places.items()}
        yield RunningCluster(rendered, net, containers, addresses, ready)


def write_hostfile(cluster: RunningCluster) -> str:
    """What worker discovery will write: one ``<fqdn> slots=N`` line per worker, in ordinal order."""
    slots = next(
        env["value"] for env in cluster.rendered.master.container["env"] if env["name"] == "KOMPI_SLOTS_PER_WORKER"
    )
    text = "".join(f"{pod.fqdn} slots={slots}\n" for pod in cluster.rendered.workers)
    result = exec_in(cluster.master, ["sh", "-c", 'cat > "$KOMPI_HOSTFILE"'], stdin=text)
    assert result.returncode == 0, result.stderr
    return text
