"""images/scripts/kompi_discovery.py imported as a module (it is installed as a script in the images)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.images.podman import REPO_ROOT

SCRIPT = REPO_ROOT / "images" / "scripts" / "kompi_discovery.py"


def load() -> ModuleType:
    if "kompi_discovery" not in sys.modules:
        spec = importlib.util.spec_from_file_location("kompi_discovery", SCRIPT)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["kompi_discovery"] = module
        spec.loader.exec_module(module)
    return sys.modules["kompi_discovery"]


kd = load()
