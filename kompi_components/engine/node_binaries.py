"""What a real node runs besides Debian's containerd, runc and CNI plugins: the kubelet, a CoreDNS with
only the plugins a node needs, and the pod sandbox's pause program (all from the Go module proxy)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from kompi_components.engine import versions
from kompi_components.engine.cluster_binaries import kubernetes_go_mod, kubernetes_version_ldflags
from kompi_components.engine.gobuild import Component, GoBuild

GLUE = Path(__file__).parent / "go"
KUBELET = "kubelet"
COREDNS = "coredns"
PAUSE = "kompi-pause"


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


COMPONENTS = (
    Component("kubelet", (KUBELET,), f"kubelet-{versions.KUBERNETES}", _make_kubelet),
    Component("coredns", (COREDNS,), f"coredns-{versions.COREDNS}-glue-{_glue('coredns')}", _make_coredns),
    Component("pause", (PAUSE,), f"pause-glue-{_glue('pause')}", _make_pause),
)
