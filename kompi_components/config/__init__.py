"""Stack configuration: schema, loading and validation."""

from kompi_components.config.errors import ConfigError
from kompi_components.config.load import load_config
from kompi_components.config.schema import KompiConfig

__all__ = ["ConfigError", "KompiConfig", "load_config"]
