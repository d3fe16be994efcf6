"""The typed arguments of kompi's component, generated from the config schema: do not edit.

Regenerate with ``python -m kompi_components.config.args_source > kompi_components/components/args.py``. Keys are the
config keys in snake_case (nested objects take either spelling); values are checked as stack config is, with the
same messages. Only the keys typed ``pulumi.Input`` take Outputs (known during ``up``: checked then).
"""

# No `from __future__ import annotations`: Pulumi's component provider reads these hints at run time.
from typing import Any, TypedDict

import pulumi


class MasterSettingsArgs(TypedDict, total=False):
    "Master pod settings"

    resources: dict[str, Any]
    "container resources (requests/limits) (default: {})"

    node_selector: dict[str, str]
    "nodeSelector of the pods (default: {})"

    tolerations: list[dict[str, Any]]
    "tolerations of the pods (default: [])"

    affinity: dict[str, Any]
    "affinity of the pods (default: {})"

    volumes: list[dict[str, Any]]
    "extra pod volumes (default: [])"

    volume_mounts: list[dict[str, Any]]
    "extra mounts in the MPI container (default: [])"

    annotations: dict[str, str]
    "extra pod annotations (default: {})"

    compute: bool
    "the master is also a compute node: first in the hostfile, with a worker's slots (default: false)"


class PodSettingsArgs(TypedDict, total=False):
    "Scheduling and resources for one kind of pod (master or worker)."

    resources: dict[str, Any]
    "container resources (requests/limits) (default: {})"

    node_selector: dict[str, str]
    "nodeSelector of the pods (default: {})"

    tolerations: list[dict[str, Any]]
    "tolerations of the pods (default: [])"

    affinity: dict[str, Any]
    "affinity of the pods (default: {})"

    volumes: list[dict[str, Any]]
    "extra pod volumes (default: [])"

    volume_mounts: list[dict[str, Any]]
    "extra mounts in the MPI container (default: [])"

    annotations: dict[str, str]
    "extra pod annotations (default: {})"


class NetworkPolicySettingsArgs(TypedDict, total=False):
    "NetworkPolicy settings"

    enabled: bool
    "pods accept traffic only from pods of the same cluster (default: true)"

    ssh_allow_from: list[str]
    "CIDR blocks allowed to reach the master's sshd from outside the cluster (default: [])"


class HostNetworkSettingsArgs(TypedDict, total=False):
    "Host network settings"

    enabled: bool
    (
        "master and workers on their nodes' network, for MPI bandwidth (opt-in; weaker isolation: docs/security.md): "
        "one kompi pod per node; needs mpiInterfaces and networkPolicy.enabled false (default: false)"
    )

    mpi_interfaces: str | None
    (
        "the nodes' interfaces for MPI (Open MPI's btl and oob tcp_if_include; used with enabled): names or IPv4 CIDR "
        "blocks, comma-separated, e.g. ens5 or 10.0.0.0/16 (default: null)"
    )


class GangSettingsArgs(TypedDict, total=False):
    "Gang scheduling settings"

    enabled: bool
    "schedule master and workers as one gang (default: false)"

    mode: str
    (
        "scheduler-plugins or volcano: a PodGroup for that scheduler; pdb: kube-batch style PodDisruptionBudget "
        '(kube-batch is retired: for imported kube-openmpi stacks) (default: "scheduler-plugins")'
    )

    scheduler_name: str | None
    "schedulerName of the pods (default: kube-batch, volcano, scheduler-plugins-scheduler)"


class AppCodeArgs(TypedDict, total=False):
    "One git repository fetched into every pod (by kompi:appCodeFetcher) before the MPI container starts."

    name: str
    "name of the code volume (required)"

    repo: str
    "git URL (https://... or git@host:org/repo.git) (required)"

    ref: str
    'branch, tag or commit (default: "HEAD")'

    mount_path: str
    "where the code appears (read-only) in the MPI container (required)"

    sub_path: str | None
    "directory of the repository to mount (default: null)"

    ssh_key_secret: str | None
    "Secret with the deploy key under 'ssh' and the git host's 'known_hosts' (default: null)"

    insecure_skip_host_key_check: bool
    "do not verify the git host's key (opt-in; avoid) (default: false)"

    retries: int
    "failed fetches retried before the pod fails (default: 5)"

    retry_wait_seconds: int
    "seconds between retries (default: 10)"


class SharedClaimArgs(TypedDict, total=False):
    "An existing PersistentVolumeClaim mounted on the master and every worker."

    claim_name: str
    "name of the existing claim (required)"

    access_mode: str
    "the claim's access mode (ReadWriteMany to share between nodes) (required)"

    mount_path: str
    "mount path in master and workers (required)"

    read_only: bool
    "mount read-only (default: false)"


class WorkerVolumeArgs(TypedDict, total=False):
    "A claim per worker, made from a volumeClaimTemplate and deleted with the cluster."

    name: str
    'template name; each claim is named NAME-WORKERPOD (default: "scratch")'

    size: str
    "requested storage, e.g. 100Gi (required)"

    storage_class_name: str | None
    "storage class (default: the cluster's)"

    access_mode: str
    'access mode of each claim (default: "ReadWriteOnce")'

    mount_path: str
    "mount path in each worker (required)"


class DataVolumeArgs(TypedDict, total=False):
    """A claim kompi creates (<clusterName>-data-<name>), mounted on the master, every worker and the data-preparation
    Job; it outlives `pulumi up` runs and, with ``retain``, `pulumi destroy`.
    """

    name: str
    "short name: the claim is {clusterName}-data-{name} (required)"

    size: str
    "requested storage, e.g. 50Gi (required)"

    storage_class_name: str | None
    "storage class (default: the cluster's)"

    access_mode: str
    'access mode (ReadWriteMany to share between nodes) (default: "ReadWriteMany")'

    mount_path: str
    "mount path in the master, the workers and the preparation Job (required)"

    retain: bool
    "keep the claim (and its data) on `pulumi destroy` (Pulumi retainOnDelete) (default: false)"

    read_only_in_pods: bool | None
    "mount read-only in master and workers (default: true with kompi:dataPreparation, else false)"


class DataPreparationArgs(TypedDict, total=False):
    "A Job that fills the data volumes once, before master and workers start; reruns when its spec changes."

    image: str | None
    "image (default: the MPI image, kompi:image and kompi:imageTag)"

    command: list[str]
    "command and arguments (exec form, no shell unless you call one) (required)"

    env: Any
    "environment: a name->value map, or a list of Kubernetes EnvVars (default: [])"

    resources: dict[str, Any]
    "container resources (requests/limits) (default: {})"

    backoff_limit: int
    "failed pods retried before the Job fails (default: 2)"

    active_deadline_seconds: int
    "the Job fails after this long; `pulumi up` waits 60 s more (default: 3600)"


class OneShotArgs(TypedDict, total=False):
    "Run one command when all workers are ready, then stop (kube-openmpi's mpiMaster.oneShot)."

    enabled: bool
    "the master is a Job that runs the command once (default: false)"

    command: Any
    "command (a list, or a string run by /bin/sh -c), e.g. mpiexec ... (default: null)"

    release_workers: bool
    "scale the workers to 0 when the command succeeds (RBAC: that scale only) (default: true)"

    timeout_seconds: int
    "the run fails if the workers are not all ready by then (default: 600)"

    restarts: int
    (
        "times a failed command starts again, after its workers are ready again (it resumes from its checkpoint); 0: "
        "never; a preempted or evicted pod is not counted (default: 3)"
    )


class ClusterArgs(TypedDict, total=False):
    "The arguments of a kompi cluster (kompi:index:Cluster)."

    cluster_name: str
    "prefix of every object name (default: the resource's name)"

    namespace: pulumi.Input[str]
    'namespace of every object (default: "kompi")'

    create_namespace: bool
    "create (and destroy) the namespace (default: true)"

    cluster_domain: str
    'the Kubernetes cluster\'s DNS domain (default: "cluster.local")'

    workers: int
    "number of worker pods (default: 2)"

    gpus_per_worker: int
    "nvidia.com/gpu limit of each worker (default: 0)"

    slots_per_worker: int | None
    "MPI slots per worker in the hostfile (default: GPUs, or 1)"

    image: pulumi.Input[str]
    'image repository of master and workers (default: "localhost/kompi")'

    image_tag: pulumi.Input[str]
    'image tag, optionally pinned to a digest: TAG@sha256:... (default: "4.1.4-bookworm-0.1.0")'

    image_pull_policy: str
    'pull policy of every container (default: "IfNotPresent")'

    image_pull_secrets: list[str]
    "names of registry pull Secrets (default: [])"

    ssh_key_version: int
    "change to rotate the cluster's SSH keys (default: 1)"

    shm_size: str | None
    'size of the memory-backed /dev/shm (null: none) (default: "1Gi")'

    run_as_root: bool
    "run the pods as root (opt-in; weaker isolation) (default: false)"

    run_as_user: int
    "uid of the pods (the image's user) (default: 1000)"

    run_as_group: int
    "gid and fsGroup of the pods (default: 1000)"

    master_pod: MasterSettingsArgs
    "master pod settings"

    worker_pod: PodSettingsArgs
    "worker pod settings"

    one_worker_per_node: bool
    "at most one worker per node (a required pod anti-affinity on kubernetes.io/hostname) (default: false)"

    network_policy: NetworkPolicySettingsArgs
    "NetworkPolicy settings"

    host_network: HostNetworkSettingsArgs
    "host network settings"

    gang_scheduling: GangSettingsArgs
    "gang scheduling settings"

    app_code: list[AppCodeArgs]
    "git repositories fetched into every pod (default: [])"

    app_code_fetcher: str
    'what fetches appCode: kompi (kompi-fetch-code, from kompi\'s image) or git-sync (gitSyncImage) (default: "kompi")'

    git_sync_image: str
    'git-sync image (with kompi:appCodeFetcher git-sync) (default: "registry.k8s.io/git-sync/git-sync:v4.4.2")'

    shared_claims: list[SharedClaimArgs]
    "existing claims mounted on master and all workers (default: [])"

    worker_volume: WorkerVolumeArgs | None
    "a claim per worker from a template (default: null)"

    data_volumes: list[DataVolumeArgs]
    "claims kompi creates, mounted on master, workers and dataPreparation (default: [])"

    data_preparation: DataPreparationArgs | None
    "a Job that writes the data volumes before master and workers start (default: null)"

    one_shot: OneShotArgs
    "one-shot mode settings"

    allow_data_loss: bool
    "let `up` make a change that deletes claims (docs/changes.md: `deletes data`); refused otherwise (default: false)"

    queue: str | None
    "Kueue LocalQueue that admits master and workers together, all or nothing, against its quota (default: null)"

    queue_priority_class: str | None
    "Kueue WorkloadPriorityClass of the cluster's workload (with queue) (default: null)"

    queue_timeout_seconds: int
    (
        "with queue: seconds `up` waits for Kueue's admission, then fails with the queue and Kueue's reason "
        "(rolloutTimeoutSeconds counts from admission) (default: 3600)"
    )

    rollout_timeout_seconds: int
    "how long `up` waits for master and workers to be Ready after a change (large images pull slowly) (default: 600)"

    stuck_pod_timeout_seconds: int
    (
        "how long a pod may stay in a state that waiting does not mend (its image cannot be pulled, it keeps crashing, "
        "no node fits it, its node is lost) before `up` fails naming it and why (default: 60)"
    )

    kubeconfig: pulumi.Input[str]
    (
        "the kubeconfig (its content, or a path) of the cluster your Kubernetes provider manages, for kompi's rollout "
        "step, which waits for the pods itself; default: KUBECONFIG, as the default provider. Kept as a secret"
    )

    kube_context: pulumi.Input[str]
    "context of that kubeconfig (default: its current context)"

    kube_cluster: pulumi.Input[str]
    "cluster of that kubeconfig, in place of the context's (as the provider's `cluster`)"
