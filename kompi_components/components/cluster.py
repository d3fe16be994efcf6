"""KompiCluster: an Open MPI cluster, as a Pulumi component that programs compose."""

# No `from __future__ import annotations`: Pulumi's component provider reads the hints below at run time.
import shlex

import pulumi

from kompi_components import contract
from kompi_components.components.args import ClusterArgs
from kompi_components.components.data_guard import DataGuard, claim_identities
from kompi_components.components.inputs import Resolved, resolve
from kompi_components.components.kubernetes_object import ResourceFactory
from kompi_components.components.object_group import ObjectGroup
from kompi_components.components.object_inputs import ObjectInputs
from kompi_components.components.queue_release import QueueRelease
from kompi_components.components.rollout import RollHandover, StatefulSetRollout, handed_over
from kompi_components.components.ssh_identity import SshIdentity
from kompi_components.config.schema import KompiConfig
from kompi_components.kube.access import ClusterAccess
from kompi_components.manifests import queue
from kompi_components.manifests.cluster import ClusterObjects, build_cluster
from kompi_components.manifests.meta import Manifest, PlannedObject
from kompi_components.manifests.pod import MPI_CONTAINER
from kompi_components.naming import cluster_names

TYPE = "kompi:index:Cluster"


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


def _named_after(resource: pulumi.Resource, name: pulumi.Input[str]) -> pulumi.Output[str]:
    """``name`` as an output that depends on ``resource``: what reads it waits until the object exists."""
    return pulumi.Output.all(resource.urn, name).apply(lambda values: str(values[1]))


class KompiCluster(pulumi.ComponentResource):
    """An Open MPI cluster on Kubernetes: a master and a StatefulSet of workers that reach each other over SSH,
    so that `kubectl exec <master> -- mpiexec ...` runs a distributed job. Its Kubernetes objects use the
    provider given in the resource options (or the default one)."""

    namespace: pulumi.Output[str]
    """namespace of the cluster's objects (once the objects that need it exist)"""
    master_pod: pulumi.Output[str]
    """the pod to run `mpiexec` in (one-shot mode: job/<name>), once it is Ready"""
    workers: pulumi.Output[int]
    """number of worker pods"""
    total_slots: pulumi.Output[int]
    """MPI slots of the whole cluster (the hostfile's sum)"""
    hostfile: pulumi.Output[str]
    """path of the hostfile in the master, which Open MPI reads by default"""
    first_job: pulumi.Output[str]
    """the kubectl command of a first job over every worker"""
    ssh_public_key: pulumi.Output[str]
    """the cluster's SSH client public key"""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """``args``: ClusterArgs (a dict); bad values raise InvalidArgs (one line) before anything registers."""
        resolved = resolve(args, default_cluster_name=name)
        super().__init__(TYPE, name, None, opts)
        config = resolved.config
        self._access = _access(resolved)
        self._timeout = config.rollout_timeout_seconds
        self._stuck_timeout = config.stuck_pod_timeout_seconds
        self._queue_timeout = config.queue_timeout_seconds if config.queue else None
        names = cluster_names(config)
        child = pulumi.ResourceOptions(parent=self)
        patterns = resolved.derived(lambda real: cluster_names(real).known_host_patterns())
        identity = SshIdentity(f"{name}-ssh", names, config.ssh_key_version, child, known_hosts=patterns)
        objects = build_cluster(config, identity.secret_data)
        real = None if resolved.real is None else resolved.real.apply(lambda c: build_cluster(c, identity.secret_data))
        # Clusters made by kompi 0.1.0 (the stack program, named after their clusterName) keep their objects.
        legacy = name == config.cluster_name and not resolved.deferred
        self._factory = ResourceFactory(name, legacy, "namespace" in resolved.deferred, ObjectInputs(objects, real))

        # Everything lives in the namespace, so it comes first when kompi creates it.
        namespace: list[pulumi.Resource] = []
        namespace_name = resolved.derived(lambda real: cluster_names(real).namespace)
        self.namespace = pulumi.Output.from_input(namespace_name)
        if objects.namespace:
            group = self._group("Namespace", f"{name}-namespace", objects.namespace)
            namespace.append(group)
            self.namespace = _named_after(group.resources[0], namespace_name)
        secret = identity.store(objects.ssh[0], namespace, self._factory)
        pods_need: list[pulumi.Resource] = [*namespace, secret]
        pods_need.append(self._group("Network", f"{name}-network", objects.network, namespace))
        if objects.gang:
            pods_need.append(self._group("GangScheduling", f"{name}-gang", objects.gang, namespace))
        if config.queue:
            pod_group = resolved.derived(lambda real: queue.group_name(real, cluster_names(real)))
            opts = pulumi.ResourceOptions(parent=self, depends_on=namespace)
            pods_need.append(QueueRelease(f"{name}-queue-release", namespace_name, pod_group, self._access, opts))
        # Objects whose change could delete claims wait for the guard, which refuses such a change.
        claims = claim_identities(objects.all()) if real is None else real.apply(lambda o: claim_identities(o.all()))
        guard = DataGuard(f"{name}-data-guard", claims, config.allow_data_loss, pulumi.ResourceOptions(parent=self))
        pods_need += self._data(name, objects, [*namespace, guard])
        workers = self._group("Workers", f"{name}-workers", objects.workers, [*pods_need, guard], rolled=True)
        # One-shot mode: the Job's ServiceAccount and RBAC exist before the Job's pod starts.
        master = self._group("Master", f"{name}-master", objects.master, pods_need, ordered=True, rolled=True)
        # Under a queue the workers' rollout reads the one-shot Job, and acts on a new one (a new run).
        self._rolled(workers, launcher=master.resources[-1] if config.one_shot.enabled and config.queue else None)
        master_ready = self._rolled(master) or master.resources[-1]
        # One-shot mode: the Job's pod has a generated name; the output names the Job.
        master_name = f"job/{names.master}" if config.one_shot.enabled else names.master_pod
        self.master_pod = _named_after(master_ready, master_name)
        self.workers = pulumi.Output.from_input(config.workers)
        self.total_slots = pulumi.Output.from_input(total_slots(config))
        self.hostfile = pulumi.Output.from_input(contract.HOSTFILE)
        self.first_job = pulumi.Output.from_input(resolved.derived(first_job_command))
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

    def _group(
        self,
        type_name: str,
        name: str,
        objects: list[PlannedObject],
        depends_on: list[pulumi.Resource] | None = None,
        ordered: bool = False,
        rolled: bool = False,
    ) -> ObjectGroup:
        """``rolled``: the group's StatefulSet is rolled by kompi (``_handed_over``, ``_rolled``)."""
        inputs_of = self._handed_over if rolled else None
        factory = self._factory
        return ObjectGroup(type_name, name, objects, self, depends_on, ordered, factory=factory, inputs_of=inputs_of)

    def _handed_over(self, item: PlannedObject) -> Manifest:
        """``item``'s resource inputs; a StatefulSet's take their updateStrategy from its RollHandover (made here),
        which hands the roll of one made by an earlier kompi to kompi first."""
        inputs = self._factory.inputs(item)
        if item.manifest["kind"] != "StatefulSet":
            return inputs
        name = f"{self._factory.owner}-{item.manifest['metadata']['name']}-handover"
        return handed_over(inputs, RollHandover(name, inputs, self._access, pulumi.ResourceOptions(parent=self)))

    def _rolled(self, group: ObjectGroup, launcher: pulumi.CustomResource | None = None) -> StatefulSetRollout | None:
        """Each StatefulSet of the group gets the step that rolls all its pods at once and waits for them
        (a group has one at most); returns it."""
        rollout = None
        for item, inputs, resource in zip(group.objects, group.manifests, group.resources, strict=True):
            if item.manifest["kind"] == "StatefulSet":
                statefulset = item.manifest["metadata"]["name"]  # (the cluster's name, never a value known later)
                aliases = self._factory.aliases(f"{statefulset}-rollout")
                opts = pulumi.ResourceOptions(parent=group, aliases=aliases)
                name = f"{self._factory.owner}-{statefulset}-rollout"
                # replicas that Pulumi leaves to someone else (a one-shot run's Job) are set back at a new run
                restores = "spec.replicas" in item.options.ignore_changes
                rollout = StatefulSetRollout(
                    name,
                    inputs,
                    resource,
                    self._access,
                    self._timeout,
                    opts,
                    self._queue_timeout,
                    restores,
                    stuck_pod_timeout_seconds=self._stuck_timeout,
                    launcher=launcher,
                )
        return rollout

    def _data(self, name: str, objects: ClusterObjects, need: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """The data claims (after ``need``), then the preparation Job that writes them; the MPI pods wait for
        both."""
        if not objects.data:
            return []
        claims = self._group("Data", f"{name}-data", objects.data, need)
        if not objects.preparation:
            return [claims]
        # pulumi-kubernetes waits for the Job to complete; a failed Job stops `up` before any MPI pod exists.
        job = self._group("DataPreparation", f"{name}-data-preparation", objects.preparation, [*need, claims])
        return [claims, job]


def _access(resolved: Resolved) -> ClusterAccess:
    return ClusterAccess(
        resolved.access.get("kubeconfig"), resolved.access.get("kube_context"), resolved.access.get("kube_cluster")
    )
