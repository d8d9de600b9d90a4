"""Settings, read once from the environment (prefix ``TRULOOP_``) and an optional ``.env`` file.

``log_settings`` (read first), ``sendbird`` (the admin command's), ``settings`` (the server's, with
its checks), ``mcp`` (one MCP server), ``models`` (can a model string be built), ``urls`` (Redis
URLs), ``rates`` (rate limits), ``secret`` (secrets kept out of sight), ``secret_files`` (each
secret's ``TRULOOP_X_FILE``) and ``loading`` (one readable error for all problems).
"""

from __future__ import annotations

from ..errors import ConfigError
from .log_settings import LogSettings
from .mcp_servers import McpServer
from .model_strings import MODEL_CHECK_S, RENAMED_PREFIXES, VALID_MODELS, model_problem
from .rates import parse_limit
from .reading import (
    environment_settings,
    get_settings,
    given_settings,
    load_log_settings,
    load_settings,
)
from .secret import reveal
from .sendbird_settings import SendbirdSettings
from .settings import Settings
from .urls import REDIS_SCHEMES, masked_url

__all__ = [
    "MODEL_CHECK_S",
    "REDIS_SCHEMES",
    "RENAMED_PREFIXES",
    "VALID_MODELS",
    "ConfigError",
    "LogSettings",
    "McpServer",
    "SendbirdSettings",
    "Settings",
    "environment_settings",
    "get_settings",
    "given_settings",
    "load_log_settings",
    "load_settings",
    "masked_url",
    "model_problem",
    "parse_limit",
    "reveal",
]
