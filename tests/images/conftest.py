"""Fixtures of the image tests: the tools they need (missing ones fail, never skip) and the images."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.images.podman import REPO_ROOT, podman_env

BUILD_SCRIPT = REPO_ROOT / "images" / "build.sh"
FLAVORS = ("ompi4", "ompi5")
TRAINING_FLAVORS = ("ompi4-torch", "ompi5-torch")  # PyTorch on each, about 6 GB
REQUIRED_TOOLS = ("podman", "buildah", "runc")
TEST_CODE_DIR = "/kompi-test"  # where the tests mount their MPI program in every pod


@pytest.fixture(scope="session")
def container_tools() -> None:
    """podman, buildah and runc must be installed: without them these tests fail (opt out with the flag)."""
    missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: install them or run pytest with --skip-containers")


def run_build(timeout: int, flavors: tuple[str, ...] = FLAVORS) -> subprocess.CompletedProcess[str]:
    """images/build.sh for ``flavors``; it prints one "<flavor> <image>" line each."""
    return subprocess.run(
        [str(BUILD_SCRIPT), *flavors],
        capture_output=True,
        text=True,
        env={**podman_env(), "PYTHON": sys.executable},
        timeout=timeout,
        check=False,
    )


def built(flavors: tuple[str, ...]) -> dict[str, str]:
    """Build (or reuse, when unchanged) ``flavors`` with images/build.sh; flavor -> image tag."""
    start = time.monotonic()
    result = run_build(timeout=1200, flavors=flavors)
    if result.returncode != 0:
        pytest.fail(f"images/build.sh failed ({result.returncode}):\n{result.stderr[-6000:]}")
    tags = dict(line.split() for line in result.stdout.splitlines() if line.strip())
    print(f"\nimages/build.sh: {tags} in {time.monotonic() - start:.1f}s")
    assert set(tags) == set(flavors)
    return tags


@pytest.fixture(scope="session")
def images(container_tools: None) -> dict[str, str]:
    """kompi's images, one per MPI flavor; flavor -> image tag."""
    return built(FLAVORS)


@pytest.fixture(scope="session")
def training_images(container_tools: None) -> dict[str, str]:
    """The training images (PyTorch and examples/training on each flavor); flavor -> image tag."""
    return built(TRAINING_FLAVORS)


@pytest.fixture
def test_code(tmp_path: Path) -> str:
    """tests/images' MPI program, readable by any pod user, as a podman --mount argument."""
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(Path(__file__).with_name("allreduce.py"), code / "allreduce.py")
    code.chmod(0o755)
    os.chmod(code / "allreduce.py", 0o644)
    return f"type=bind,source={code},destination={TEST_CODE_DIR},ro=true"
