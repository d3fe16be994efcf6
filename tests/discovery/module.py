"""images/scripts/kompi_discovery imported as a package (the images install it beside its launcher, not on
Python's path), every module of it imported (``kd.dns_client``, ...), and the launcher that the images'
kompi-discover and kompi-wait run."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from tests.images.podman import REPO_ROOT

PACKAGE = REPO_ROOT / "images" / "scripts" / "kompi_discovery"
SCRIPT = REPO_ROOT / "images" / "scripts" / "kompi-discover"


def load() -> ModuleType:
    if "kompi_discovery" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "kompi_discovery", PACKAGE / "__init__.py", submodule_search_locations=[str(PACKAGE)]
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["kompi_discovery"] = module
        spec.loader.exec_module(module)
        for path in sorted(PACKAGE.glob("*.py")):
            if path.stem != "__init__":
                importlib.import_module(f"kompi_discovery.{path.stem}")
    return sys.modules["kompi_discovery"]


kd = load()
