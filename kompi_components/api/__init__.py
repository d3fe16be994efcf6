"""kompi as a Pulumi component: ``KompiCluster(name, ClusterArgs(...), opts)``, from Python or through the
``kompi`` component provider (``pulumi-resource-kompi``) from any Pulumi language."""

from kompi_components.components.args import (
    AppCodeArgs,
    ClusterArgs,
    DataPreparationArgs,
    DataVolumeArgs,
    GangSettingsArgs,
    HostNetworkSettingsArgs,
    MasterSettingsArgs,
    NetworkPolicySettingsArgs,
    OneShotArgs,
    PodSettingsArgs,
    SharedClaimArgs,
    WorkerVolumeArgs,
)
from kompi_components.components.cluster import KompiCluster
from kompi_components.components.inputs import InvalidArgs

__all__ = [
    "AppCodeArgs",
    "ClusterArgs",
    "DataPreparationArgs",
    "DataVolumeArgs",
    "GangSettingsArgs",
    "HostNetworkSettingsArgs",
    "InvalidArgs",
    "KompiCluster",
    "MasterSettingsArgs",
    "NetworkPolicySettingsArgs",
    "OneShotArgs",
    "PodSettingsArgs",
    "SharedClaimArgs",
    "WorkerVolumeArgs",
]
