"""Typed configuration: ``ctxproxy.toml`` parsed once into frozen objects."""
from .schema import (
    ADMIN_TOKEN_ENV,
    Config,
    MitmConfig,
    PipelineConfig,
    RouteConfig,
    ServerConfig,
    StoreConfig,
    UpstreamConfig,
    default_config_text,
    load_config,
)
from .typed import ConfigError, parse_section

__all__ = [
    "ADMIN_TOKEN_ENV", "Config", "ConfigError", "MitmConfig", "PipelineConfig", "RouteConfig", "ServerConfig",
    "StoreConfig", "UpstreamConfig", "default_config_text", "load_config", "parse_section",
]
