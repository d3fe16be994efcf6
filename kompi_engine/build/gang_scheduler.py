"""scheduler-plugins' Coscheduling scheduler and PodGroup controller, built from the Go module proxy.

The local cluster runs them beside kube-scheduler so that kompi's PodGroups meet a real gang scheduler.
"""

from __future__ import annotations

import re
import shutil

from kompi_engine import versions
from kompi_engine.build.cluster_binaries import kubernetes_version_ldflags
from kompi_engine.build.gobuild import Component, GoBuild

# Move to versions.py (changes the cache key). v0.33.5 is served by the proxy; v0.35.0 is refused and the
# version list is refused, so newer releases cannot be discovered from here.
MODULE = "sigs.k8s.io/scheduler-plugins"
SCHEDULER_BINARY = "kube-scheduler-plugins"
CONTROLLER_BINARY = "scheduler-plugins-controller"
# the PodGroup CRD, and ElasticQuota because the controller watches both and stops if either is missing
CRDS = {
    "crd-podgroups.yaml": "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml",
    "crd-elasticquotas.yaml": "config/crd/bases/scheduling.x-k8s.io_elasticquotas.yaml",
}


def _mirrored_replaces(upstream: str) -> str:
    """Upstream's replace lines (k8s.io staging modules at published versions): a dependency's replaces
    do not apply to the module that requires it, so the wrapper must repeat them."""
    lines = re.findall(r"^\s*(?:replace\s+)?(\S+ => \S+ v\S+)\s*$", upstream, re.MULTILINE)
    return "".join(f"\t{line}\n" for line in lines)


def _kubernetes_version(upstream: str) -> str:
    found = re.search(r"^\s*k8s\.io/kubernetes => k8s\.io/kubernetes (v\S+)", upstream, re.MULTILINE)
    return found.group(1) if found else "v0.0.0"


def wrapper_go_mod(upstream: str) -> str:
    go_line = re.search(r"^go (\S+)", upstream, re.MULTILINE)
    return (
        f"module kompi.local/scheduler-plugins\n\ngo {go_line.group(1) if go_line else '1.24.0'}\n\n"
        f"require {MODULE} v{versions.SCHEDULER_PLUGINS}\n\nreplace (\n{_mirrored_replaces(upstream)})\n"
    )


def _make(build: GoBuild) -> None:
    module = build.module_dir(MODULE, f"v{versions.SCHEDULER_PLUGINS}")
    upstream = (module / "go.mod").read_text()
    go_mod = wrapper_go_mod(upstream)
    commands = {SCHEDULER_BINARY: f"{MODULE}/cmd/scheduler", CONTROLLER_BINARY: f"{MODULE}/cmd/controller"}
    source = build.wrapper_module("scheduler-plugins", go_mod, {}, list(commands.values()))
    for binary, package in commands.items():
        build.build(package, binary, source, ldflags=kubernetes_version_ldflags(_kubernetes_version(upstream)))
    for name, relative in CRDS.items():
        shutil.copyfile(module / relative, build.bin / name)


COMPONENTS = (
    Component(
        "scheduler-plugins",
        (SCHEDULER_BINARY, CONTROLLER_BINARY),
        f"scheduler-plugins-{versions.SCHEDULER_PLUGINS}",
        _make,
    ),
)
