"""The image fixtures of tests/images (build once, reuse)."""

from tests.images.conftest import container_tools, images

__all__ = ["container_tools", "images"]
