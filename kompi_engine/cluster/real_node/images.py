"""Step images: the pause image and kompi's images, from podman's store into the node's containerd (which
keeps them across `down`: an image loaded with the same id is not loaded again)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kompi_engine.build.node_binaries import PAUSE
from kompi_engine.cluster import node_images
from kompi_engine.cluster.real_node.containerd import SNAPSHOTTER
from kompi_engine.cluster.real_node.errors import RealNodeError
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def from_podman(image_names: Sequence[str] | None) -> dict[str, str]:
    """Name -> podman image id of ``image_names``, or of every kompi image but the training ones."""
    images = node_images.kompi_images()
    if image_names is None:
        return {name: image_id for name, image_id in images.items() if not node_images.is_training_image(name)}
    missing = sorted(set(image_names) - set(images))
    if missing:
        raise RealNodeError(f"no image {', '.join(missing)} in podman's store: build it with images/build.sh")
    return {name: images[name] for name in image_names}


def load_images(node: RealNode, images: dict[str, str], log: Log) -> None:
    """The pause image and ``images`` (name -> podman image id); an image already loaded with the same id is
    not loaded again."""
    archives = node.state / "images"
    pause = archives / "pause.tar"
    node_images.write_pause_archive(node.bin / PAUSE, pause)
    node.ctr("images", "import", "--snapshotter", SNAPSHOTTER, str(pause))
    loaded_file = archives / "loaded.json"
    loaded = json.loads(loaded_file.read_text()) if loaded_file.exists() else {}
    present = set(node.ctr("images", "ls", "--quiet").split())
    by_id: dict[str, list[str]] = {}
    for name, image_id in sorted(images.items()):
        if loaded.get(name) != image_id or name not in present:
            by_id.setdefault(image_id, []).append(name)
    for image_id, names in by_id.items():
        began = time.monotonic()
        archive = archives / "image.tar"
        node_images.save_image(names[0], archive)
        node.ctr("images", "import", "--snapshotter", SNAPSHOTTER, str(archive))
        archive.unlink()
        for other in names[1:]:
            node.ctr("images", "tag", "--force", names[0], other)
        loaded |= dict.fromkeys(names, image_id)
        loaded_file.write_text(json.dumps(loaded, indent=1))
        log(f"real node: loaded {', '.join(names)} in {time.monotonic() - began:.1f} s")


# (nothing to undo: containerd's store keeps the images for the next `up`)
IMAGES: Step[RealNode] = Step("images", lambda node, log: load_images(node, node.images_to_load, log))
