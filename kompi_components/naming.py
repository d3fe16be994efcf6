"""Object names and labels, all derived from the cluster name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kompi_components import contract

if TYPE_CHECKING:
    from kompi_components.config.schema import KompiConfig

MANAGED_BY = "kompi"
PART_OF = "kompi"
# Volumes kompi adds to the pods; user volumes may not use this prefix.
RESERVED_VOLUME_PREFIX = "kompi-"
VOLUME_SSH = "kompi-ssh"
VOLUME_GENERATED = "kompi-generated"
VOLUME_SHM = "kompi-shm"
# See Names.claim_template_labels: fixed for ever, whatever contract.KOMPI_VERSION says.
CLAIM_TEMPLATE_FORMAT = "0.1.0"


def code_volume(app_name: str) -> str:
    return f"kompi-code-{app_name}"


def git_secret_volume(app_name: str) -> str:
    return f"kompi-git-{app_name}"


def shared_claim_volume(index: int) -> str:
    return f"kompi-shared-{index}"


def data_volume(volume_name: str) -> str:
    """The pod volume of a ``kompi:dataVolumes`` entry."""
    return f"kompi-data-{volume_name}"


@dataclass(frozen=True)
class Names:
    """Every name one cluster uses, so that no builder invents its own."""

    cluster: str
    namespace: str
    cluster_domain: str

    @property
    def service(self) -> str:
        return self.cluster

    @property
    def ssh_secret(self) -> str:
        return f"{self.cluster}-ssh"

    def data_claim(self, volume_name: str) -> str:
        """The claim kompi creates for a ``kompi:dataVolumes`` entry."""
        return f"{self.cluster}-data-{volume_name}"

    @property
    def workers(self) -> str:
        return f"{self.cluster}-worker"

    @property
    def master(self) -> str:
        return f"{self.cluster}-master"

    @property
    def master_pod(self) -> str:
        """The master StatefulSet's only pod."""
        return f"{self.master}-0"

    @property
    def oneshot_account(self) -> str:
        """ServiceAccount, Role and RoleBinding of the one-shot Job's worker release."""
        return f"{self.cluster}-oneshot"

    @property
    def network_policy(self) -> str:
        return self.cluster

    @property
    def master_ssh_policy(self) -> str:
        return f"{self.cluster}-master-ssh"

    @property
    def gang(self) -> str:
        return self.cluster

    @property
    def service_domain(self) -> str:
        """DNS suffix of every pod: <pod>.<service_domain>."""
        return f"{self.service}.{self.namespace}.svc.{self.cluster_domain}"

    def worker_pod(self, ordinal: int) -> str:
        return f"{self.workers}-{ordinal}"

    def known_host_patterns(self) -> list[str]:
        """The host names the cluster's host key is trusted for: this cluster's pods only."""
        suffixes = (self.service_domain, f"{self.service}.{self.namespace}.svc")
        return [f"[*.{suffix}]:{contract.SSH_PORT}" for suffix in suffixes]

    def labels(self, component: str | None = None) -> dict[str, str]:
        """Kubernetes recommended labels; ``component`` narrows to master or worker."""
        labels = {
            "app.kubernetes.io/name": "kompi",
            "app.kubernetes.io/instance": self.cluster,
            "app.kubernetes.io/version": contract.KOMPI_VERSION,
            "app.kubernetes.io/managed-by": MANAGED_BY,
            "app.kubernetes.io/part-of": PART_OF,
        }
        if component:
            labels["app.kubernetes.io/component"] = component
        return labels

    def pod_labels(self, component: str) -> dict[str, str]:
        """Labels of pod templates: no version, so that a kompi upgrade that leaves the pods as they are
        does not restart them (and the jobs they run); the image tag says what the pods run."""
        labels = self.labels(component)
        del labels["app.kubernetes.io/version"]
        return labels

    def claim_template_labels(self, component: str) -> dict[str, str]:
        """Labels of a StatefulSet's claim templates, which Kubernetes never lets change: a new value
        would replace the StatefulSet and, with it, delete every claim. So they never follow the running
        kompi version; their ``app.kubernetes.io/version`` is the claim-template format's, the value
        kompi 0.1.0 wrote, so that clusters made by it are not replaced either."""
        return self.labels(component) | {"app.kubernetes.io/version": CLAIM_TEMPLATE_FORMAT}

    def selector(self, component: str | None = None) -> dict[str, str]:
        """The stable subset of labels used in selectors (never the version)."""
        selector = {"app.kubernetes.io/name": "kompi", "app.kubernetes.io/instance": self.cluster}
        if component:
            selector["app.kubernetes.io/component"] = component
        return selector


def cluster_names(config: KompiConfig) -> Names:
    return Names(cluster=config.cluster_name, namespace=config.namespace, cluster_domain=config.cluster_domain)
