"""Every version the engine builds, in one place. The cache directory is keyed by them (OWN_STAMP_ONLY aside)."""

from __future__ import annotations

import hashlib
import json

# Kubernetes control plane and tools (k8s.io/kubernetes; its staging modules are published as v0.<minor>.<patch>).
KUBERNETES = "1.36.3"
ETCD = "3.6.16"
KWOK = "0.8.0"
# github.com/coredns/coredns, the real node's cluster DNS
COREDNS = "1.14.7"
# github.com/cloudnativelabs/kube-router/v2, the real node's NetworkPolicy enforcement: the only version served
KUBE_ROUTER = "2.1.0"
# sigs.k8s.io/scheduler-plugins (Coscheduling): the newest the proxy serves (v0.35.0 is refused)
SCHEDULER_PLUGINS = "0.33.5"

# Pulumi CLI (github.com/pulumi/pulumi/pkg/v3, package cmd/pulumi). 3.272.0 is refused by the proxy.
PULUMI = "3.274.0"
# pulumi-kubernetes' provider module is served only as this pseudo-version, which is release 4.25.0.
PULUMI_KUBERNETES = "4.25.0"
PULUMI_KUBERNETES_MODULE_VERSION = "v4.0.0-20260115033456-f47bc2d6f199"
# pulumi-random's provider module is not served: kompi bridges the Terraform random provider itself.
TERRAFORM_RANDOM_MODULE_VERSION = "v1.3.2-0.20260513075824-f8d869dc98d9"
PULUMI_RANDOM = "4.21.4"  # the version the bridged provider reports (the pinned Python SDK's)
TERRAFORM_BRIDGE = "3.137.0"
PULUMI_FOR_BRIDGE = "3.256.0"  # the bridge does not compile against newer pulumi/pkg
PULUMI_TERRAFORM_PLUGIN_SDK = "v2.0.0-20260318212141-5525259d096b"
# github.com/pulumi/pulumi-yaml's language host (cmd/pulumi-language-yaml), for `runtime: yaml` programs: the only
# language host the proxy serves. Its go.mod pins pulumi pkg/sdk 3.206.0, which it is built with.
PULUMI_YAML = "1.25.0"
# github.com/distribution/distribution/v3 (cmd/registry), the local cluster's image registry
REGISTRY = "3.1.2"
# sigs.k8s.io/kueue (cmd/kueue), the local cluster's queue for kompi:queue: the only version served
KUEUE = "0.17.0"

# Binaries added after the tree above: each has its own stamp (a new version rebuilds it alone), and they are
# left out of the cache key, so that adding one does not move the tree and rebuild every other binary.
OWN_STAMP_ONLY = ("PULUMI_YAML", "REGISTRY", "KUEUE")


def all_versions() -> dict[str, str]:
    return {name: value for name, value in globals().items() if name.isupper() and isinstance(value, str)}


def cache_key() -> str:
    """A short, stable name for this set of versions (the engine cache's directory)."""
    keyed = {name: value for name, value in all_versions().items() if name not in OWN_STAMP_ONLY}
    digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()
    return f"k8s-{KUBERNETES}-pulumi-{PULUMI}-{digest[:10]}"
