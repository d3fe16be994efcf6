"""Which node `bin/kompi up --local` starts its cluster with: a real one (kubelet and containerd, on which
kompi's pods run and firstJob works) wherever this machine can run one, else kwok's fake nodes.

A real node needs the host's tools and root (RealNode.check_host) and the stack's image. An image of
kompi's local repository (localhost/kompi) that podman does not have yet is built with images/build.sh
(once; minutes); an image from a registry is the node's to pull.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from kompi_components.config.schema import KompiConfig
from kompi_engine.cluster.node_images import KOMPI_REPOSITORY, is_training_image
from kompi_engine.cluster.real_node import RealNode, RealNodeError

NodeChoice = Literal["auto", "kwok", "real"]
BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "images" / "build.sh"
BUILD_TOOLS = ("podman", "buildah")


class NoRealNode(RuntimeError):
    """This machine cannot run a real node for this stack; the message says why and what would fix it."""


def flavor_of(image_tag: str) -> str:
    """images/build.sh's flavor of a kompi image tag (4.1.4-bookworm-0.1.0: ompi4, 5.0.11-...: ompi5, and a
    training image's 5.0.11-bookworm-0.1.0-torch2.15.0: ompi5-torch)."""
    major = image_tag.split(".", 1)[0]
    if major not in ("4", "5"):
        raise NoRealNode(f"kompi:imageTag {image_tag} is no tag images/build.sh makes (4.x-... or 5.x-...)")
    return f"ompi{major}-torch" if is_training_image(image_tag) else f"ompi{major}"


def ensure_image(config: KompiConfig, say: Callable[[str], None]) -> tuple[str, ...] | None:
    """The images the node must get from podman's store, built first if missing; None: it pulls them."""
    if config.image != KOMPI_REPOSITORY:
        return None
    reference = config.image_reference
    flavor = flavor_of(config.image_tag)
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool) is None]
    if missing:
        raise NoRealNode(f"building {reference} needs {', '.join(missing)}: apt-get install podman buildah debootstrap")
    if subprocess.run(["podman", "image", "exists", reference], check=False).returncode != 0:
        log = Path(tempfile.gettempdir()) / f"kompi-build-{flavor}.log"
        say(f"building {reference} for the real node (once; minutes): images/build.sh {flavor} (log: {log})")
        with log.open("w") as output:
            built = subprocess.run([str(BUILD_SCRIPT), flavor], stdout=output, stderr=subprocess.STDOUT, check=False)
        if built.returncode != 0:
            last = log.read_text().strip().splitlines()[-1:] or ["no output"]
            raise NoRealNode(f"images/build.sh {flavor} failed ({last[0]}; the whole log: {log})")
        if subprocess.run(["podman", "image", "exists", reference], check=False).returncode != 0:
            raise NoRealNode(f"images/build.sh {flavor} made no {reference}: set kompi:imageTag to the tag it printed")
    return (reference,)


def choose(
    choice: NodeChoice, node: RealNode, config: KompiConfig, say: Callable[[str], None]
) -> tuple[bool, tuple[str, ...] | None]:
    """(start a real node?, the images it gets). ``auto`` falls back to kwok, saying why; ``real`` raises."""
    if choice == "kwok":
        return False, None
    try:
        node.check_host()
        return True, ensure_image(config, say)
    except (RealNodeError, NoRealNode) as error:
        if choice == "real":
            raise
        say(f"no real node on this machine ({error}): kwok's nodes instead, on which firstJob cannot run")
        return False, None
