"""The stack configuration (Pulumi config namespace ``kompi``) as typed, validated models.

Every field has a description; the README's config table is checked against these models.
Kubernetes pass-through fields (resources, tolerations, affinity, volumes, ...) are taken as objects
and validated against the real Kubernetes schemas by the tests; kompi checks what it relies on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from kompi_components import contract, naming
from kompi_components.config import formats, image_ref
from kompi_components.config.keys import stack_key

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

# clusterName prefixes every object; "<name>-worker" must leave room for the StatefulSet's
# controller-revision-hash label (name + 11 characters <= 63).
CLUSTER_NAME_MAX = 40
DATA_VOLUME_NAME_MAX = 40
# An appCode name becomes the volume name kompi-code-<name>, a DNS label of at most 63 characters.
APP_NAME_MAX = 63 - len(naming.code_volume(""))


T = TypeVar("T")


def _dns_label(max_length: int = 63, why: str = "") -> AfterValidator:
    def check(value: str) -> str:
        if len(value) > max_length or not DNS_LABEL.match(value):
            raise ValueError(
                f"a DNS-1123 label (lower-case letters, digits, '-'; at most {max_length} characters{why})"
            )
        return value

    return AfterValidator(check)


def _matches(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(what)
        return value

    return AfterValidator(check)


def _absolute_path(value: str) -> str:
    if not value.startswith("/") or "\0" in value:
        raise ValueError("an absolute path")
    return value


def _relative_path(value: str) -> str:
    if value.startswith("/") or ".." in value.split("/"):
        raise ValueError("a relative path without '..'")
    return value


def _checked(problem: Callable[[T], str | None]) -> AfterValidator:
    """A validator that refuses a value for which ``problem`` names what is wrong."""

    def check(value: T) -> T:
        found = problem(value)
        if found is not None:
            raise ValueError(found)
        return value

    return AfterValidator(check)


DnsLabel = Annotated[str, _dns_label()]
# Kueue reads both from pod labels, whose values are at most 63 characters.
QueueName = Annotated[str, _dns_label(why=": Kueue reads it from a pod label")]
Resources = Annotated[dict[str, Any], _checked(formats.resources_problem)]
ClusterName = Annotated[str, _dns_label(CLUSTER_NAME_MAX)]
ObjectName = Annotated[str, _matches(DNS_SUBDOMAIN, "a Kubernetes object name (DNS-1123 subdomain)")]
Quantity = Annotated[str, _checked(formats.quantity_problem)]
Cidr = Annotated[str, _checked(formats.cidr_problem)]
Interfaces = Annotated[str, _checked(formats.interfaces_problem)]
AbsolutePath = Annotated[str, AfterValidator(_absolute_path)]
RelativePath = Annotated[str, AfterValidator(_relative_path)]
ImageRepository = Annotated[str, _checked(image_ref.repository_problem)]
ImageTag = Annotated[str, _checked(image_ref.tag_problem)]
ImageReference = Annotated[str, _checked(image_ref.reference_problem)]
# A part of a Kubernetes object as its API takes it (a toleration, an affinity, a volume, an env var): passed on
# as written, Kubernetes checks it.
KubeFragment = dict[str, Any]
AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
# Access modes that let more than one pod mount a claim (on different nodes).
SHARED_ACCESS_MODES = frozenset({"ReadOnlyMany", "ReadWriteMany"})


class Model(BaseModel):
    """Strict, closed, camelCase models: an unknown or misspelt key is an error."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, alias_generator=stack_key, populate_by_name=False
    )


class PodSettings(Model):
    """Scheduling and resources for one kind of pod (master or worker)."""

    resources: Resources = Field(default_factory=dict, description="container resources (requests/limits)")
    node_selector: dict[str, str] = Field(default_factory=dict, description="nodeSelector of the pods")
    tolerations: list[KubeFragment] = Field(default_factory=list, description="tolerations of the pods")
    affinity: KubeFragment = Field(default_factory=dict, description="affinity of the pods")
    volumes: list[KubeFragment] = Field(default_factory=list, description="extra pod volumes")
    volume_mounts: list[KubeFragment] = Field(default_factory=list, description="extra mounts in the MPI container")
    annotations: dict[str, str] = Field(default_factory=dict, description="extra pod annotations")


class MasterSettings(PodSettings):
    compute: bool = Field(
        default=False,
        description="the master is also a compute node: first in the hostfile, with a worker's slots",
    )


class NetworkPolicySettings(Model):
    enabled: bool = Field(default=True, description="pods accept traffic only from pods of the same cluster")
    ssh_allow_from: list[Cidr] = Field(
        default_factory=list, description="CIDR blocks allowed to reach the master's sshd from outside the cluster"
    )


class HostNetworkSettings(Model):
    enabled: bool = Field(
        default=False,
        description="master and workers on their nodes' network, for MPI bandwidth (opt-in; weaker isolation: "
        "docs/security.md): one kompi pod per node; needs mpiInterfaces and networkPolicy.enabled false",
    )
    mpi_interfaces: Interfaces | None = Field(
        default=None,
        description="the nodes' interfaces for MPI (Open MPI's btl and oob tcp_if_include; used with enabled): "
        "names or IPv4 CIDR blocks, comma-separated, e.g. ens5 or 10.0.0.0/16",
    )


GangMode = Literal["pdb", "volcano", "scheduler-plugins"]
DEFAULT_SCHEDULERS: dict[str, str] = {
    "pdb": "kube-batch",
    "volcano": "volcano",
    "scheduler-plugins": "scheduler-plugins-scheduler",
}


class GangSettings(Model):
    enabled: bool = Field(default=False, description="schedule master and workers as one gang")
    mode: GangMode = Field(
        default="scheduler-plugins",
        description="scheduler-plugins or volcano: a PodGroup for that scheduler; pdb: kube-batch style "
        "PodDisruptionBudget (kube-batch is retired: for imported kube-openmpi stacks)",
    )
    scheduler_name: str | None = Field(
        default=None,
        description="schedulerName of the pods (default: kube-batch, volcano, scheduler-plugins-scheduler)",
    )

    @property
    def scheduler(self) -> str:
        return self.scheduler_name or DEFAULT_SCHEDULERS[self.mode]


class AppCode(Model):
    """One git repository fetched into every pod (by kompi:appCodeFetcher) before the MPI container starts."""

    name: Annotated[str, _dns_label(APP_NAME_MAX, ": kompi names its volume kompi-code-<name>")] = Field(
        description="name of the code volume"
    )
    repo: str = Field(min_length=1, description="git URL (https://... or git@host:org/repo.git)")
    ref: str = Field(default="HEAD", min_length=1, description="branch, tag or commit")
    mount_path: AbsolutePath = Field(description="where the code appears (read-only) in the MPI container")
    sub_path: RelativePath | None = Field(default=None, description="directory of the repository to mount")
    ssh_key_secret: ObjectName | None = Field(
        default=None, description="Secret with the deploy key under 'ssh' and the git host's 'known_hosts'"
    )
    insecure_skip_host_key_check: bool = Field(
        default=False, description="do not verify the git host's key (opt-in; avoid)"
    )
    retries: int = Field(default=5, ge=0, le=1000, description="failed fetches retried before the pod fails")
    retry_wait_seconds: int = Field(default=10, ge=1, le=3600, description="seconds between retries")

    @model_validator(mode="after")
    def _host_key_check_needs_ssh(self) -> AppCode:
        if self.insecure_skip_host_key_check and self.ssh_key_secret is None:
            raise ValueError("insecureSkipHostKeyCheck only together with sshKeySecret")
        return self


class SharedClaim(Model):
    """An existing PersistentVolumeClaim mounted on the master and every worker."""

    claim_name: ObjectName = Field(description="name of the existing claim")
    access_mode: AccessMode = Field(description="the claim's access mode (ReadWriteMany to share between nodes)")
    mount_path: AbsolutePath = Field(description="mount path in master and workers")
    read_only: bool = Field(default=False, description="mount read-only")


class WorkerVolume(Model):
    """A claim per worker, made from a volumeClaimTemplate and deleted with the cluster."""

    name: DnsLabel = Field(default="scratch", description="template name; each claim is named NAME-WORKERPOD")
    size: Quantity = Field(description="requested storage, e.g. 100Gi")
    storage_class_name: str | None = Field(default=None, description="storage class (default: the cluster's)")
    access_mode: AccessMode = Field(default="ReadWriteOnce", description="access mode of each claim")
    mount_path: AbsolutePath = Field(description="mount path in each worker")


class DataVolume(Model):
    """A claim kompi creates (<clusterName>-data-<name>), mounted on the master, every worker and the
    data-preparation Job; it outlives `pulumi up` runs and, with ``retain``, `pulumi destroy`."""

    # "kompi-data-" + name is the pod volume's name, a DNS label of at most 63 characters.
    name: Annotated[str, _dns_label(DATA_VOLUME_NAME_MAX)] = Field(
        description="short name: the claim is {clusterName}-data-{name}"
    )
    size: Quantity = Field(description="requested storage, e.g. 50Gi")
    storage_class_name: str | None = Field(default=None, description="storage class (default: the cluster's)")
    access_mode: AccessMode = Field(
        default="ReadWriteMany", description="access mode (ReadWriteMany to share between nodes)"
    )
    mount_path: AbsolutePath = Field(description="mount path in the master, the workers and the preparation Job")
    retain: bool = Field(
        default=False, description="keep the claim (and its data) on `pulumi destroy` (Pulumi retainOnDelete)"
    )
    read_only_in_pods: bool | None = Field(
        default=None,
        description="mount read-only in master and workers (default: true with kompi:dataPreparation, else false)",
    )


def _command(value: list[str]) -> list[str]:
    if not value or not all(value):
        raise ValueError("a non-empty list of non-empty strings (the command, then its arguments)")
    return value


def _env_vars(value: object) -> object:
    """A name->value map becomes EnvVars, sorted: a map has no order, so reordering it changes nothing."""
    expected = "a name->value map of strings (quote numbers), or a list of Kubernetes EnvVars"
    if isinstance(value, list):
        return value
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise ValueError(expected)
    return [{"name": name, "value": value[name]} for name in sorted(value)]


def _env_names(value: list[KubeFragment]) -> list[KubeFragment]:
    if not all(isinstance(entry.get("name"), str) and entry["name"] for entry in value):
        raise ValueError("a list of Kubernetes EnvVars, each with a name")
    return value


class DataPreparation(Model):
    """A Job that fills the data volumes once, before master and workers start; reruns when its spec changes."""

    image: ImageReference | None = Field(
        default=None, min_length=1, description="image (default: the MPI image, kompi:image and kompi:imageTag)"
    )
    command: Annotated[list[str], AfterValidator(_command)] = Field(
        description="command and arguments (exec form, no shell unless you call one)"
    )
    env: Annotated[list[KubeFragment], BeforeValidator(_env_vars), AfterValidator(_env_names)] = Field(
        default_factory=list, description="environment: a name->value map, or a list of Kubernetes EnvVars"
    )
    resources: Resources = Field(default_factory=dict, description="container resources (requests/limits)")
    backoff_limit: int = Field(default=2, ge=0, le=100, description="failed pods retried before the Job fails")
    active_deadline_seconds: int = Field(
        default=3600, ge=1, description="the Job fails after this long; `pulumi up` waits 60 s more"
    )


def _one_shot_command(value: object) -> object:
    """A string runs through /bin/sh -c; a list is the command and its arguments (exec form)."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("an empty command")
        return ["/bin/sh", "-c", value]
    return value


class OneShot(Model):
    """Run one command when all workers are ready, then stop (kube-openmpi's mpiMaster.oneShot)."""

    enabled: bool = Field(default=False, description="the master is a Job that runs the command once")
    command: Annotated[
        list[str] | None,
        BeforeValidator(_one_shot_command),
        AfterValidator(lambda value: _command(value) if value is not None else None),
    ] = Field(default=None, description="command (a list, or a string run by /bin/sh -c), e.g. mpiexec ...")
    release_workers: bool = Field(
        default=True, description="scale the workers to 0 when the command succeeds (RBAC: that scale only)"
    )
    timeout_seconds: int = Field(
        default=600, ge=1, le=86400, description="the run fails if the workers are not all ready by then"
    )
    # 3 by default: a lost worker or node is rare in one run, a command that fails for good (a bug) should
    # fail the Job within minutes, not after a day of retries; at most 100, since a run that needs more
    # is failing for another reason than interruptions.
    restarts: int = Field(
        default=3,
        ge=0,
        le=100,
        description="times a failed command starts again, after its workers are ready again (it resumes from its "
        "checkpoint); 0: never; a preempted or evicted pod is not counted",
    )

    @model_validator(mode="after")
    def _command_when_enabled(self) -> OneShot:
        if self.enabled and not self.command:
            raise ValueError("kompi:oneShot.enabled needs a command")
        return self


class KompiConfig(Model):
    """Everything one stack configures."""

    cluster_name: ClusterName = Field(default="kompi", description="prefix of every object name")
    namespace: DnsLabel = Field(default="kompi", description="namespace of every object")
    create_namespace: bool = Field(default=True, description="create (and destroy) the namespace")
    cluster_domain: Annotated[str, _matches(DNS_SUBDOMAIN, "a DNS domain such as cluster.local")] = Field(
        default="cluster.local", description="the Kubernetes cluster's DNS domain"
    )
    workers: int = Field(default=2, ge=0, le=4096, description="number of worker pods")
    gpus_per_worker: int = Field(default=0, ge=0, le=64, description="nvidia.com/gpu limit of each worker")
    slots_per_worker: int | None = Field(
        default=None, ge=1, le=1024, description="MPI slots per worker in the hostfile (default: GPUs, or 1)"
    )
    image: ImageRepository = Field(
        default="localhost/kompi", min_length=1, description="image repository of master and workers"
    )
    image_tag: ImageTag = Field(
        default=contract.DEFAULT_IMAGE_TAG, description="image tag, optionally pinned to a digest: TAG@sha256:..."
    )
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = Field(
        default="IfNotPresent", description="pull policy of every container"
    )
    image_pull_secrets: list[ObjectName] = Field(default_factory=list, description="names of registry pull Secrets")
    ssh_key_version: int = Field(default=1, ge=1, description="change to rotate the cluster's SSH keys")
    shm_size: Quantity | None = Field(default="1Gi", description="size of the memory-backed /dev/shm (null: none)")
    run_as_root: bool = Field(default=False, description="run the pods as root (opt-in; weaker isolation)")
    run_as_user: int = Field(default=contract.MPI_UID, ge=1, description="uid of the pods (the image's user)")
    run_as_group: int = Field(default=contract.MPI_GID, ge=1, description="gid and fsGroup of the pods")
    master_pod: MasterSettings = Field(default_factory=MasterSettings, description="master pod settings")
    worker_pod: PodSettings = Field(default_factory=PodSettings, description="worker pod settings")
    one_worker_per_node: bool = Field(
        default=False,
        description="at most one worker per node (a required pod anti-affinity on kubernetes.io/hostname)",
    )
    network_policy: NetworkPolicySettings = Field(
        default_factory=NetworkPolicySettings, description="NetworkPolicy settings"
    )
    host_network: HostNetworkSettings = Field(default_factory=HostNetworkSettings, description="host network settings")
    gang_scheduling: GangSettings = Field(default_factory=GangSettings, description="gang scheduling settings")
    app_code: list[AppCode] = Field(default_factory=list, description="git repositories fetched into every pod")
    app_code_fetcher: Literal["kompi", "git-sync"] = Field(
        default="kompi",
        description="what fetches appCode: kompi (kompi-fetch-code, from kompi's image) or git-sync (gitSyncImage)",
    )
    git_sync_image: ImageReference = Field(
        default="registry.k8s.io/git-sync/git-sync:v4.4.2",
        min_length=1,
        description="git-sync image (with kompi:appCodeFetcher git-sync)",
    )
    shared_claims: list[SharedClaim] = Field(
        default_factory=list, description="existing claims mounted on master and all workers"
    )
    worker_volume: WorkerVolume | None = Field(default=None, description="a claim per worker from a template")
    data_volumes: list[DataVolume] = Field(
        default_factory=list, description="claims kompi creates, mounted on master, workers and dataPreparation"
    )
    data_preparation: DataPreparation | None = Field(
        default=None, description="a Job that writes the data volumes before master and workers start"
    )
    one_shot: OneShot = Field(default_factory=OneShot, description="one-shot mode settings")
    allow_data_loss: bool = Field(
        default=False,
        description="let `up` make a change that deletes claims (docs/changes.md: `deletes data`); refused otherwise",
    )
    queue: QueueName | None = Field(
        default=None,
        description="Kueue LocalQueue that admits master and workers together, all or nothing, against its quota",
    )
    queue_priority_class: QueueName | None = Field(
        default=None, description="Kueue WorkloadPriorityClass of the cluster's workload (with queue)"
    )
    queue_timeout_seconds: int = Field(
        default=3600,
        ge=1,
        le=7 * 86400,
        description="with queue: seconds `up` waits for Kueue's admission, then fails with the queue and Kueue's "
        "reason (rolloutTimeoutSeconds counts from admission)",
    )
    rollout_timeout_seconds: int = Field(
        default=600,
        ge=1,
        le=86400,
        description="how long `up` waits for master and workers to be Ready after a change (large images pull slowly)",
    )
    stuck_pod_timeout_seconds: int = Field(
        default=60,
        ge=1,
        le=86400,
        description="how long a pod may stay in a state that waiting does not mend (its image cannot be pulled, it "
        "keeps crashing, no node fits it, its node is lost) before `up` fails naming it and why",
    )

    @property
    def image_reference(self) -> str:
        """The MPI image, REPOSITORY:TAG, that master, workers and kompi's own init containers run."""
        return f"{self.image}:{self.image_tag}"

    @property
    def slots(self) -> int:
        """MPI slots of one worker."""
        return self.slots_per_worker or max(self.gpus_per_worker, 1)
