"""Claims as host directories, for running kompi's rendered pods and Job in podman (tests/images harness).

tests/images/pod_like.py emulates Secret and emptyDir volumes; a PersistentVolumeClaim here becomes a
bind mount of one host directory per claim, read-only where the pod's volume or mount says so, the
way every pod that mounts a ReadWriteMany claim sees the same files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.images.cluster import Pod


def provision(root: Path, claim: str, fs_group: int) -> Path:
    """A claim's directory as a volume plugin that honours fsGroup leaves it: group fsGroup, setgid."""
    path = root / claim
    path.mkdir(parents=True)
    os.chown(path, 0, fs_group)
    path.chmod(0o2775)
    return path


def _claim_volumes(pod_spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v["persistentVolumeClaim"] for v in pod_spec.get("volumes", []) if "persistentVolumeClaim" in v}


def claims_as_binds(pod_spec: Mapping[str, Any], claim_dirs: Mapping[str, Path]) -> tuple[dict[str, Any], list[str]]:
    """``pod_spec`` without its claims (one container), and the podman --mount arguments that replace them."""
    claims = _claim_volumes(pod_spec)
    (container,) = pod_spec["containers"]
    binds = []
    for mount in container.get("volumeMounts", []):
        claim = claims.get(mount["name"])
        if claim is None:
            continue
        read_only = bool(mount.get("readOnly")) or bool(claim.get("readOnly"))
        source = claim_dirs[claim["claimName"]]
        binds.append(f"type=bind,source={source},destination={mount['mountPath']},ro={str(read_only).lower()}")
    kept_mounts = [m for m in container.get("volumeMounts", []) if m["name"] not in claims]
    spec = {
        **pod_spec,
        "volumes": [v for v in pod_spec.get("volumes", []) if v["name"] not in claims],
        "containers": [{**container, "volumeMounts": kept_mounts}],
    }
    return spec, binds


def pod_without_claims(pod: Pod, claim_dirs: Mapping[str, Path]) -> tuple[Pod, list[str]]:
    spec, binds = claims_as_binds(pod.spec, claim_dirs)
    return Pod(pod.name, pod.fqdn, spec), binds
