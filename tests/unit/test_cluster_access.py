"""The program's rollout step reaches the cluster that the Kubernetes provider's settings name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kompi_components.kube.access import ClusterAccess


def kubeconfig(current: str = "dead") -> dict:
    def cluster(name: str, server: str) -> dict:
        return {"name": name, "cluster": {"server": server}}

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster("dead", "https://127.0.0.1:1"), cluster("live", "https://127.0.0.1:16443")],
        "users": [{"name": "me", "user": {"token": "t"}}],
        "contexts": [
            {"name": "dead", "context": {"cluster": "dead", "user": "me"}},
            {"name": "live", "context": {"cluster": "live", "user": "me"}},
        ],
        "current-context": current,
    }


def host(access: ClusterAccess) -> str:
    return str(access.api_client().configuration.host)


def test_a_kubeconfig_given_as_a_path_or_as_text_and_a_context(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig()))
    assert host(ClusterAccess(str(path))) == "https://127.0.0.1:1"
    assert host(ClusterAccess(str(path), context="live")) == "https://127.0.0.1:16443"
    assert host(ClusterAccess(yaml.safe_dump(kubeconfig("live")))) == "https://127.0.0.1:16443"


def test_without_a_kubeconfig_setting_kubeconfig_is_read_and_a_cluster_can_replace_the_contexts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig()))
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert host(ClusterAccess()) == "https://127.0.0.1:1"
    assert host(ClusterAccess(cluster="live")) == "https://127.0.0.1:16443"
    assert host(ClusterAccess(str(path), context="dead", cluster="live")) == "https://127.0.0.1:16443"
