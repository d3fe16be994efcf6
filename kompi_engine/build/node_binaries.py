"""What a real node runs besides Debian's containerd, runc and CNI plugins: the kubelet, a CoreDNS with
only the plugins a node needs, and the pod sandbox's pause program (all from the Go module proxy)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from kompi_engine import versions
from kompi_engine.build.cluster_binaries import kubernetes_go_mod, kubernetes_version_ldflags
from kompi_engine.build.gobuild import Component, GoBuild

GLUE = Path(__file__).parent / "go"
KUBELET = "kubelet"
COREDNS = "coredns"
PAUSE = "kompi-pause"
KUBE_ROUTER = "kube-router"
KUBE_ROUTER_MODULE = "github.com/cloudnativelabs/kube-router/v2"
REGISTRY = "kompi-registry"
REGISTRY_MODULE = "github.com/distribution/distribution/v3"
KUBE_ROUTER_DEPENDENCY_FLOORS = {
    # the versions the kubelet build already uses (in the module and build caches)
    "golang.org/x/net": "v0.49.0",
    "golang.org/x/crypto": "v0.47.0",
    "google.golang.org/grpc": "v1.79.3",
    "google.golang.org/protobuf": "v1.36.12-0.20260120151049-f2248ac996af",
}


def _make_kubelet(build: GoBuild) -> None:
    source = build.wrapper_module("kubelet", kubernetes_go_mod(build, "kubelet"), {}, ["k8s.io/kubernetes/cmd/kubelet"])
    build.build(
        "k8s.io/kubernetes/cmd/kubelet",
        KUBELET,
        source,
        ldflags=kubernetes_version_ldflags(versions.KUBERNETES),
        tags="selinux,notest,grpcnotrace",
    )


def _make_coredns(build: GoBuild) -> None:
    go_mod = f"module kompi.local/coredns\n\ngo 1.26.0\n\nrequire github.com/coredns/coredns v{versions.COREDNS}\n"
    main = (GLUE / "coredns" / "main.go").read_text()
    source = build.wrapper_module("coredns", go_mod, {"main.go": main})
    build.build(".", COREDNS, source)


def _make_pause(build: GoBuild) -> None:
    main = (GLUE / "pause" / "main.go").read_text()
    source = build.wrapper_module("pause", "module kompi.local/pause\n\ngo 1.26.0\n", {"main.go": main})
    build.build(".", PAUSE, source)


def _glue(name: str) -> str:
    return hashlib.sha256((GLUE / name / "main.go").read_bytes()).hexdigest()[:8]


def _make_kube_router(build: GoBuild) -> None:
    """kube-router as a NetworkPolicy controller only (no routing, no service proxy). Its v2.1.0 go.mod
    pins dependency versions with published advisories (golang.org/x/net, grpc, protobuf); the wrapper
    requires newer ones, which Go's minimal version selection then uses."""
    go_mod = (
        "module kompi.local/kube-router\n\ngo 1.26.0\n\nrequire (\n"
        f"\tgithub.com/cloudnativelabs/kube-router/v2 v{versions.KUBE_ROUTER}\n"
        + "".join(f"\t{module} {version}\n" for module, version in KUBE_ROUTER_DEPENDENCY_FLOORS.items())
        + ")\n"
    )
    source = build.wrapper_module("kube-router", go_mod, {}, [f"{KUBE_ROUTER_MODULE}/cmd/kube-router"])
    build.build(f"{KUBE_ROUTER_MODULE}/cmd/kube-router", KUBE_ROUTER, source)


def _make_registry(build: GoBuild) -> None:
    """The reference OCI registry (distribution's cmd/registry), for the local cluster's images."""
    go_mod = f"module kompi.local/registry\n\ngo 1.26.0\n\nrequire {REGISTRY_MODULE} v{versions.REGISTRY}\n"
    source = build.wrapper_module("registry", go_mod, {}, [f"{REGISTRY_MODULE}/cmd/registry"])
    build.build(f"{REGISTRY_MODULE}/cmd/registry", REGISTRY, source)


COMPONENTS = (
    Component("kubelet", (KUBELET,), f"kubelet-{versions.KUBERNETES}", _make_kubelet),
    Component("coredns", (COREDNS,), f"coredns-{versions.COREDNS}-glue-{_glue('coredns')}", _make_coredns),
    Component("pause", (PAUSE,), f"pause-glue-{_glue('pause')}", _make_pause),
    Component(
        "kube-router",
        (KUBE_ROUTER,),
        f"kube-router-{versions.KUBE_ROUTER}-" + "-".join(KUBE_ROUTER_DEPENDENCY_FLOORS.values()),
        _make_kube_router,
    ),
    Component("registry", (REGISTRY,), f"registry-{versions.REGISTRY}", _make_registry),
)
