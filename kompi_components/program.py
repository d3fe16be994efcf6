"""The stack program (Pulumi.yaml's): stack config -> KompiCluster -> stack outputs, as any program would."""

from __future__ import annotations

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env

from kompi_components.api import ClusterArgs, KompiCluster
from kompi_components.config import ConfigError
from kompi_components.config.errors import PREFIX
from kompi_components.config.keys import to_python_names
from kompi_components.config.namespaces import kompi_config
from kompi_components.config.schema import KompiConfig

DEFAULT_CLUSTER_NAME = "kompi"
# The Kubernetes provider's settings, which kompi's rollout step follows to the same cluster.
PROVIDER_SETTINGS = {"kubeconfig": "kubeconfig", "kube_context": "context", "kube_cluster": "cluster"}


def stack_config() -> dict[str, object]:
    """Every ``kompi:*`` value Pulumi passed to the program (strings, objects as JSON)."""
    # Every namespace arrives here; a mistyped kompi key (kompy:workers) is refused, not ignored.
    try:
        return kompi_config(get_config_env() | CONFIG.get())
    except ConfigError as error:
        # RunError: Pulumi prints the one line, no traceback, and nothing has been registered yet.
        raise pulumi.RunError(str(error)) from None


def stack_args() -> ClusterArgs:
    """The stack config as the component's arguments: its keys in snake_case, its values as Pulumi gives them
    (strings, which the component reads as it reads stack config), and the provider's cluster settings."""
    config = {key.removeprefix(f"{PREFIX}:"): value for key, value in stack_config().items()}
    args = to_python_names(config, KompiConfig)
    provider = pulumi.Config("kubernetes")
    for arg, setting in PROVIDER_SETTINGS.items():
        if value := provider.get(setting):
            args[arg] = value
    return args  # type: ignore[return-value]


def run() -> KompiCluster:
    args = stack_args()
    name = args.get("cluster_name")
    cluster = KompiCluster(name if isinstance(name, str) and name else DEFAULT_CLUSTER_NAME, args)
    pulumi.export("namespace", cluster.namespace)
    pulumi.export("masterPod", cluster.master_pod)
    pulumi.export("workers", cluster.workers)
    pulumi.export("totalSlots", cluster.total_slots)
    pulumi.export("hostfile", cluster.hostfile)
    pulumi.export("firstJob", cluster.first_job)
    pulumi.export("sshPublicKey", cluster.ssh_public_key)
    return cluster
