"""Where the engine keeps its binaries and local clusters."""

from __future__ import annotations

import os
from pathlib import Path

from kompi_engine import versions


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kompi" / "engine"


def engine_dir() -> Path:
    """The build tree of this set of versions: ``bin/`` (binaries), ``src/`` (wrapper modules), ``stamps/``."""
    return cache_root() / versions.cache_key()


def bin_dir() -> Path:
    return engine_dir() / "bin"


def plugins_dir() -> Path:
    """Plugins that are scripts, not builds: the engine's runner of Python dynamic providers."""
    return Path(__file__).with_name("plugins")


def default_cluster_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kompi" / "local"
