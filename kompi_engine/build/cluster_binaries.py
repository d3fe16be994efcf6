"""The control plane's binaries: etcd, kube-apiserver and friends, kubectl and kwok (with its stages)."""

from __future__ import annotations

import re
import shutil

from kompi_engine import versions
from kompi_engine.build.gobuild import Component, GoBuild

KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
# kwok's stages (what fake nodes, pods and volumes go through); standalone kwok has none built in
KWOK_STAGES = (
    "node/fast/node-initialize",
    "node/heartbeat-with-lease/node-heartbeat-with-lease",
    "pod/fast/pod-ready",
    "pod/fast/pod-complete",
    "pod/fast/pod-delete",
    "volume/fast/pvc-provision",
    "volume/fast/pv-bind",
    "volume/fast/pv-delete",
    "volume/fast/pvc-delete",
)


def kubernetes_go_mod(build: GoBuild, name: str) -> str:
    """A wrapper module ``kompi.local/NAME`` requiring k8s.io/kubernetes with its staging modules published."""
    upstream = (build.module_dir("k8s.io/kubernetes", f"v{versions.KUBERNETES}") / "go.mod").read_text()
    go_line = re.search(r"^go (\S+)", upstream, re.MULTILINE)
    staging = sorted(set(re.findall(r"^\s*(k8s\.io/[a-z0-9-]+) => \./staging", upstream, re.MULTILINE)))
    staging_version = "v0." + versions.KUBERNETES.split(".", 1)[1]
    godebug = "\n".join(line for line in upstream.splitlines() if line.startswith("godebug"))
    replaces = "".join(f"\t{module} => {module} {staging_version}\n" for module in staging)
    return (
        f"module kompi.local/{name}\n\ngo {go_line.group(1) if go_line else '1.26.0'}\n\n{godebug}\n\n"
        f"require k8s.io/kubernetes v{versions.KUBERNETES}\n\nreplace (\n{replaces})\n"
    )


def kubernetes_version_ldflags(version: str) -> str:
    """What Kubernetes' release scripts stamp in (for binaries built from k8s.io libraries at ``version``,
    e.g. "1.36.3"); without it every binary reports v0.0.0."""
    major, minor = version.lstrip("v").split(".")[:2]
    flags = []
    for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        flags += [
            f"-X {package}.gitVersion=v{version.lstrip('v')}",
            f"-X {package}.gitMajor={major}",
            f"-X {package}.gitMinor={minor}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate=2026-01-01T00:00:00Z",
        ]
    return " ".join(flags)


def _make_kubernetes(build: GoBuild) -> None:
    go_mod = kubernetes_go_mod(build, "kubernetes")
    tools = [f"k8s.io/kubernetes/cmd/{c}" for c in KUBERNETES_COMMANDS]
    source = build.wrapper_module("kubernetes", go_mod, {}, tools)
    for command in KUBERNETES_COMMANDS:
        build.build(
            f"k8s.io/kubernetes/cmd/{command}",
            command,
            source,
            ldflags=kubernetes_version_ldflags(versions.KUBERNETES),
            tags="selinux,notest,grpcnotrace",
        )


def _make_etcd(build: GoBuild) -> None:
    go_mod = (
        "module kompi.local/etcd\n\ngo 1.26.0\n\nrequire (\n"
        f"\tgo.etcd.io/etcd/server/v3 v{versions.ETCD}\n\tgo.etcd.io/etcd/etcdctl/v3 v{versions.ETCD}\n)\n"
    )
    build.module_dir("go.etcd.io/etcd/server/v3", f"v{versions.ETCD}")
    source = build.wrapper_module("etcd", go_mod, {}, ["go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3"])
    build.build("go.etcd.io/etcd/server/v3", "etcd", source)
    build.build("go.etcd.io/etcd/etcdctl/v3", "etcdctl", source)


def _make_kwok(build: GoBuild) -> None:
    module = build.module_dir("sigs.k8s.io/kwok", f"v{versions.KWOK}")
    go_mod = f"module kompi.local/kwok\n\ngo 1.26.0\n\nrequire sigs.k8s.io/kwok v{versions.KWOK}\n"
    source = build.wrapper_module("kwok", go_mod, {}, ["sigs.k8s.io/kwok/cmd/kwok"])
    build.build("sigs.k8s.io/kwok/cmd/kwok", "kwok", source)
    stages = "\n---\n".join((module / "kustomize" / "stage" / f"{stage}.yaml").read_text() for stage in KWOK_STAGES)
    (build.bin / "kwok-stages.yaml").write_text(stages)
    shutil.copyfile(module / "kustomize/stage/volume/fast/storage-class.yaml", build.bin / "kwok-storage-class.yaml")


COMPONENTS = (
    Component("etcd", ("etcd", "etcdctl"), f"etcd-{versions.ETCD}", _make_etcd),
    Component("kwok", ("kwok",), f"kwok-{versions.KWOK}", _make_kwok),
    Component("kubernetes", KUBERNETES_COMMANDS, f"kubernetes-{versions.KUBERNETES}", _make_kubernetes),
)
