"""What changing a config key does to a running cluster, worked out from the objects kompi renders.

The stack is rendered before and after the change and compared object by object with the rules that
Kubernetes and pulumi-kubernetes apply (``classify``); ``table`` runs that for one example change of
every config key and writes docs/changes.md. The end-to-end tests check one change of each class
against a live cluster, so the rules cannot drift from what really happens.
"""

from kompi_components.impact.classify import Impact, ObjectChange, compare, impact_of

__all__ = ["Impact", "ObjectChange", "compare", "impact_of"]
