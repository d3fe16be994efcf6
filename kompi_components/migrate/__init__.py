"""Import a kube-openmpi values.yaml as a kompi stack file (``import-values``)."""

from kompi_components.migrate.translate import translate

__all__ = ["translate"]
