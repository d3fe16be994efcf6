"""Kueue's manager (cmd/kueue) and its CRDs, built from the Go module proxy, for the local cluster's
shared-quota tests (kompi:queue)."""

from __future__ import annotations

import shutil

from kompi_engine import versions
from kompi_engine.build.gobuild import Component, GoBuild

MODULE = "sigs.k8s.io/kueue"
BINARY = "kueue-manager"
CRD_DIR = "kueue-crds"  # under the engine's bin: every CRD the manager watches
_CRD_SOURCE = "config/components/crd/bases"


def _make(build: GoBuild) -> None:
    module = build.module_dir(MODULE, f"v{versions.KUEUE}")
    # Kueue's go.mod has no replace directives: requiring it is enough.
    go_mod = f"module kompi.local/kueue\n\ngo 1.26.0\n\nrequire {MODULE} v{versions.KUEUE}\n"
    source = build.wrapper_module("kueue", go_mod, {}, [f"{MODULE}/cmd/kueue"])
    build.build(f"{MODULE}/cmd/kueue", BINARY, source)
    crds = build.bin / CRD_DIR
    shutil.rmtree(crds, ignore_errors=True)
    shutil.copytree(module / _CRD_SOURCE, crds)
    crds.chmod(0o755)
    for crd in crds.iterdir():
        crd.chmod(0o644)  # the module cache's files are read-only


COMPONENTS = (Component("kueue", (BINARY,), f"kueue-{versions.KUEUE}", _make),)
