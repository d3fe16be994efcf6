"""kube-openmpi values -> kompi config: every key the chart reads is imported, reported or refused."""

from __future__ import annotations

from typing import Any

from kompi_components.config.checks import SYSTEM_NAMESPACES
from kompi_components.migrate.app_code import translate_app_code
from kompi_components.migrate.cluster_level import translate_cluster_level
from kompi_components.migrate.images import translate_images
from kompi_components.migrate.keys import check_known_keys
from kompi_components.migrate.one_shot import translate_one_shot
from kompi_components.migrate.pods import translate_pods
from kompi_components.migrate.scheduling import translate_scheduling
from kompi_components.migrate.security import translate_security
from kompi_components.migrate.translation import Translation


def translate(values: dict[str, Any], release: str, namespace: str | None = None) -> Translation:
    """Raise ValuesError for a key kube-openmpi does not read or a value that cannot be translated.

    ``release`` is the Helm release name (kompi:clusterName); ``namespace`` the one `helm --namespace` gave.
    """
    check_known_keys(values)
    result = Translation()
    result.set("clusterName", release, "--release (the Helm release name; default: the stack name)")
    if namespace is not None:
        result.set("namespace", namespace, "--namespace")
        if namespace in SYSTEM_NAMESPACES:
            # kompi would otherwise take the namespace over and delete it on destroy.
            result.set("createNamespace", False, f"--namespace {namespace} (a namespace the cluster owns)")
            result.warn("--namespace", f"{namespace} is the cluster's: kompi uses it and never creates or deletes it")
    for step in (
        translate_images,
        translate_pods,
        translate_security,
        translate_scheduling,
        translate_app_code,
        translate_one_shot,
        translate_cluster_level,
    ):
        step(values, result)
    return result
