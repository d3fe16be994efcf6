"""How the program reaches the cluster that its Kubernetes provider manages, for the steps Pulumi's
Kubernetes resources cannot do themselves (moving every pod to a new template at once)."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.kube_config import ConfigNode, KubeConfigMerger


@dataclass(frozen=True)
class ClusterAccess:
    """The provider's own settings: ``kubernetes:kubeconfig`` (a path or the file's content, as
    pulumi-kubernetes takes it), ``kubernetes:context`` and ``kubernetes:cluster`` (the context's cluster
    replaced); else KUBECONFIG or ~/.kube/config; else, inside a pod, its service account."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None

    def api_client(self, connections: int = 32) -> client.ApiClient:
        """A client that may hold ``connections`` connections at once (the rollout deletes pods in parallel)."""
        configuration = client.Configuration()
        # (the kubernetes package leaves its config loaders untyped)
        if self.kubeconfig or self.cluster:
            config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                self._kubeconfig_dict(), context=self.context, client_configuration=configuration
            )
        else:
            try:
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    _kubeconfig_files(), context=self.context, client_configuration=configuration
                )
            except ConfigException:
                if self.context:
                    raise
                config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        configuration.connection_pool_maxsize = connections
        return client.ApiClient(configuration)

    def _kubeconfig_dict(self) -> dict[str, Any]:
        loaded = self._loaded()
        if self.cluster:
            name = self.context or loaded.get("current-context")
            for entry in loaded.get("contexts") or []:
                if entry.get("name") == name:
                    entry["context"] = dict(entry.get("context") or {}) | {"cluster": self.cluster}
        return loaded

    def _loaded(self) -> dict[str, Any]:
        if not self.kubeconfig:  # only a cluster override: the files kubectl reads, merged as it does
            merged = KubeConfigMerger(_kubeconfig_files()).config  # type: ignore[no-untyped-call]
            return _plain(merged) if merged is not None else {}
        text = self.kubeconfig
        # A path is one line that names a file; anything else is the kubeconfig itself (YAML or JSON).
        if "\n" not in text.strip() and Path(text).expanduser().is_file():
            text = Path(text).expanduser().read_text()
        loaded = yaml.safe_load(text)
        if not isinstance(loaded, dict):
            raise ConfigException("kubernetes:kubeconfig is neither a kubeconfig file nor a kubeconfig's content")
        return loaded


def kubeconfig_path(value: str, base: Path) -> Path | None:
    """The file ``kubernetes:kubeconfig`` names, relative paths taken from ``base``; None when the value is
    the kubeconfig itself. The provider's rule: ``~`` expanded, then a path if such a file exists, or the
    value is absolute or starts with a dot."""
    if "\n" in value:
        return None
    path = Path(value).expanduser() if value == "~" or value.startswith("~/") else Path(value)
    if path.is_absolute() or value.startswith(".") or (base / path).exists():
        return base / path  # (an absolute path stays as it is)
    return None


def _kubeconfig_files() -> str:
    """What kubectl reads without a --kubeconfig: KUBECONFIG (paths joined by ':'), else ~/.kube/config."""
    return os.environ.get("KUBECONFIG") or "~/.kube/config"


def _plain(node: Any) -> Any:
    """The merged kubeconfig as plain dicts and lists (the merger wraps parts of it in ConfigNodes)."""
    if isinstance(node, ConfigNode):
        return _plain(node.value)
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    return copy.deepcopy(node)
