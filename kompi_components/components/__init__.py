"""Pulumi ComponentResources: one per concept, each creating the objects kompi.manifests builds."""

from kompi_components.components.cluster import KompiCluster

__all__ = ["KompiCluster"]
