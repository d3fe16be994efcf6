"""KompiCluster: the whole Open MPI cluster of one stack."""

from __future__ import annotations

import shlex

import pulumi

from kompi_components import contract
from kompi_components.components.object_group import ObjectGroup
from kompi_components.components.ssh_identity import SshIdentity
from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.cluster import ClusterObjects, build_cluster
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.naming import cluster_names


def total_slots(config: KompiConfig) -> int:
    master = config.slots if config.master_pod.compute else 0
    return config.workers * config.slots + master


def first_job_command(config: KompiConfig) -> str:
    names = cluster_names(config)
    if config.one_shot.enabled:
        # The Job runs the command itself; follow it (`pulumi up` does not wait for it).
        return shlex.join(["kubectl", "logs", "-n", names.namespace, "-f", f"job/{names.master}"])
    slots = max(total_slots(config), 1)
    # No --hostfile: the images point Open MPI's default hostfile at the one discovery maintains.
    command = ["mpiexec", "-n", str(slots), "hostname"]
    return shlex.join(["kubectl", "exec", "-n", names.namespace, names.master_pod, "-c", MPI_CONTAINER, "--", *command])


class KompiCluster(pulumi.ComponentResource):
    def __init__(self, name: str, config: KompiConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kompi:index:Cluster", name, None, opts)
        names = cluster_names(config)
        identity = SshIdentity(f"{name}-ssh", names, config.ssh_key_version, pulumi.ResourceOptions(parent=self))
        objects = build_cluster(config, identity.secret_data)

        # Everything lives in the namespace, so it comes first when kompi creates it.
        namespace: list[pulumi.Resource] = []
        if objects.namespace:
            namespace.append(ObjectGroup("Namespace", f"{name}-namespace", objects.namespace, self))
        pods_need: list[pulumi.Resource] = [*namespace, identity.store(objects.ssh[0], namespace)]
        pods_need.append(ObjectGroup("Network", f"{name}-network", objects.network, self, namespace))
        if objects.gang:
            pods_need.append(ObjectGroup("GangScheduling", f"{name}-gang", objects.gang, self, namespace))
        pods_need += self._data(name, objects, namespace)
        ObjectGroup("Workers", f"{name}-workers", objects.workers, self, pods_need)
        ObjectGroup("Master", f"{name}-master", objects.master, self, pods_need)

        self.namespace = pulumi.Output.from_input(names.namespace)
        # One-shot mode: the Job's pod has a generated name; the output names the Job.
        master = f"job/{names.master}" if config.one_shot.enabled else names.master_pod
        self.master_pod = pulumi.Output.from_input(master)
        self.workers = pulumi.Output.from_input(config.workers)
        self.total_slots = pulumi.Output.from_input(total_slots(config))
        self.hostfile = pulumi.Output.from_input(contract.HOSTFILE)
        self.first_job = pulumi.Output.from_input(first_job_command(config))
        self.ssh_public_key = identity.public_key
        self.register_outputs(
            {
                "namespace": self.namespace,
                "masterPod": self.master_pod,
                "workers": self.workers,
                "totalSlots": self.total_slots,
                "hostfile": self.hostfile,
                "firstJob": self.first_job,
                "sshPublicKey": self.ssh_public_key,
            }
        )

    def _data(self, name: str, objects: ClusterObjects, namespace: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """The data claims, then the preparation Job that writes them; the MPI pods wait for both."""
        if not objects.data:
            return []
        claims = ObjectGroup("Data", f"{name}-data", objects.data, self, namespace)
        if not objects.preparation:
            return [claims]
        # pulumi-kubernetes waits for the Job to complete; a failed Job stops `up` before any MPI pod exists.
        job = ObjectGroup(
            "DataPreparation", f"{name}-data-preparation", objects.preparation, self, [*namespace, claims]
        )
        return [claims, job]
