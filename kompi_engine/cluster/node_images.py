"""Images for the real node's containerd: the pause image, written here as a docker-archive around the
kompi-pause binary, and kompi's own images, saved from the podman store that images/build.sh fills."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

PAUSE_IMAGE = "localhost/kompi-pause:1"
KOMPI_REPOSITORY = "localhost/kompi"


class NodeImageError(RuntimeError):
    """An image cannot be made or loaded into the node."""


def write_pause_archive(binary: Path, archive: Path) -> None:
    """A one-layer image whose entrypoint is ``binary`` (as /pause), in the format `ctr images import` reads."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        info = tar.gettarinfo(str(binary), arcname="pause")
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        with binary.open("rb") as content:
            tar.addfile(info, content)
    layer_bytes = layer.getvalue()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer_bytes).hexdigest()}"]},
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    manifest = [{"Config": "config.json", "RepoTags": [PAUSE_IMAGE], "Layers": ["layer.tar"]}]
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, mode="w") as tar:
        for name, data in (
            ("layer.tar", layer_bytes),
            ("config.json", config_bytes),
            ("manifest.json", json.dumps(manifest).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def is_training_image(name: str) -> bool:
    """A training image (images/build.sh ompiN-torch), by its tag (5.0.11-bookworm-0.1.0-torch2.15.0) or its
    working tag (ompi5-torch-bookworm)."""
    return "-torch" in name.rpartition(":")[2]


def kompi_images() -> dict[str, str]:
    """Every localhost/kompi tag in the podman store, with its image id."""
    result = subprocess.run(
        ["podman", "images", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}", KOMPI_REPOSITORY],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise NodeImageError(f"podman images: {result.stderr.strip()}")
    images = dict(line.split() for line in result.stdout.splitlines() if line.strip())
    return {name: image_id for name, image_id in images.items() if not name.endswith(":<none>")}


def save_image(name: str, archive: Path) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.unlink(missing_ok=True)
    result = subprocess.run(
        ["podman", "save", "--format", "docker-archive", "-o", str(archive), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise NodeImageError(f"podman save {name}: {result.stderr.strip()}")
