"""A script of the images (not a package module) loaded as a module, so that unit tests call its functions."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest


def load_script(monkeypatch: pytest.MonkeyPatch, name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # where its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module
