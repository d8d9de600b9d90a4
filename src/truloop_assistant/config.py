"""Settings, read once from the environment (prefix ``TRULOOP_``) and an optional ``.env`` file."""

from __future__ import annotations

import json
import re
import threading
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    NoDecode,
    SettingsConfigDict,
)

from .errors import ConfigError, repeated, validation_problems
from .logs import LEVELS, LogFormat


class LogSettings(BaseSettings):
    """How the commands log: read first, so that even a command that fails logs as asked."""

    model_config = SettingsConfigDict(env_prefix="TRULOOP_", env_file=".env", extra="ignore")

    log_level: str = "INFO"
    log_format: LogFormat = "text"

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if isinstance(value, str):
            level = value.strip().upper()
            if level == "WARN":
                level = "WARNING"
            if level not in LEVELS:
                raise ValueError(f"{value!r} is not a log level: use {', '.join(LEVELS)}")
            return level
        return value

    @field_validator("log_format", mode="before")
    @classmethod
    def _known_format(cls, value: Any) -> Any:
        if isinstance(value, str):
            fmt = value.strip().lower()
            if fmt not in ("text", "json"):
                raise ValueError(f"{value!r} is not a log format: use text or json")
            return fmt
        return value


class SendbirdSettings(LogSettings):
    """The Sendbird application: enough for the admin command, which needs no Redis or JWT."""

    sendbird_app_id: str | None = None
    sendbird_api_token: str | None = None
    sendbird_api_url: str | None = None
    sendbird_bot_user_id: str = "truloop-assistant"

    @property
    def sendbird_base_url(self) -> str:
        """The Platform API base URL: the override, else the application's own host."""
        if self.sendbird_api_url:
            return self.sendbird_api_url.rstrip("/")
        return f"https://api-{self.sendbird_app_id}.sendbird.com"

    def missing_sendbird(self) -> list[str]:
        """The variables the Sendbird application needs that are not set."""
        return [
            name
            for name, value in (
                ("TRULOOP_SENDBIRD_APP_ID", self.sendbird_app_id),
                ("TRULOOP_SENDBIRD_API_TOKEN", self.sendbird_api_token),
            )
            if not value
        ]


class McpServer(BaseModel):
    """One entry of ``TRULOOP_MCP_SERVERS``: a remote MCP server (Streamable HTTP) whose tools join ours."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: AnyHttpUrl
    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{0,19}$")
    """Its tools are named ``<prefix>_<tool>`` (lower-case letters and digits, so the name stays clear)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request to the server (e.g. an ``Authorization`` header)."""
    confirm: list[str] = Field(default_factory=list)
    """Shell-style patterns (``delete_*``) of its own tool names that need the user's confirmation."""
    refresh_s: float = Field(default=60.0, gt=0)
    """How long its tool list is used before it is asked for again."""


class Settings(SendbirdSettings):
    redis_url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = Field(default="ta", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$")
    """The start of every Redis key; letters, digits, ``_ . : -`` (no braces: keys carry hash tags)."""
    model: str = "offline"
    fallback_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Tried in order when the primary model fails with a provider error (``TRULOOP_FALLBACK_MODELS``)."""
    mcp_servers: Annotated[list[McpServer], NoDecode] = Field(default_factory=list)
    """Remote MCP servers whose tools join the server tools (``TRULOOP_MCP_SERVERS``, a JSON list)."""
    channel: Literal["sendbird", "local"] = "sendbird"

    jwt_secret: str | None = None
    jwt_jwks_url: str | None = None
    jwt_audience: str | None = None
    jwt_issuer: str | None = None

    pending_call_ttl_s: int = Field(default=3600, ge=1)
    unhandled_call_wait_s: float = Field(default=30.0, gt=0)
    """How long a call one device answered -32601 (method not found) waits for another device."""
    rate_limit_user: str = "20/minute"
    rate_limit_admin: str = "100/minute"

    users_file: str | None = None
    users_api_url: str | None = None
    users_api_token: str | None = None
    kb_dir: str | None = None
    embedding_model: str | None = None
    """A pydantic-ai embedding model (``openai:text-embedding-3-small``): knowledge search by meaning too."""
    supermemory_api_key: str | None = None
    supermemory_api_url: str = "https://api.supermemory.ai"
    google_places_api_key: str | None = None
    google_places_api_url: str = "https://places.googleapis.com"
    notion_token: str | None = None
    """A Notion integration's secret, for ``kb sync-notion`` (the server never asks Notion)."""
    notion_api_url: str = "https://api.notion.com"
    tool_timeout_s: float = Field(default=10.0, gt=0)
    model_timeout_s: float = Field(default=60.0, gt=0)
    turn_timeout_s: float = Field(default=180.0, gt=0)
    max_message_chars: int = Field(default=4000, ge=1)
    max_calls_per_turn: int = Field(default=8, ge=1)
    max_client_failures: int = Field(default=3, ge=1)

    timezone: str = "Asia/Seoul"
    history_max_messages: int = Field(default=40, ge=2)
    max_model_requests: int = Field(default=8, ge=1)
    queue_name: str = "truloop"
    worker_heartbeat_s: int = Field(default=15, ge=1)

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if not value.startswith(REDIS_SCHEMES):
            raise ValueError(
                f"{masked_url(value)!r} is not a Redis URL: use redis://HOST:PORT/DB "
                "(rediss:// with TLS, unix:///PATH for a socket, redis+cluster://HOST:PORT,HOST:PORT "
                "or rediss+cluster:// for a Redis Cluster)"
            )
        return value

    @field_validator("embedding_model")
    @classmethod
    def _embedding_prefix(cls, value: str | None) -> str | None:
        """``provider:model``; empty means unset."""
        value = (value or "").strip() or None
        if value is not None and not re.fullmatch(r"[a-z][a-z0-9/_-]*:\S+", value):
            raise ValueError(
                f"{value!r} is not an embedding model: use provider:model, e.g. "
                "openai:text-embedding-3-small (other prefixes: google:, cohere:, voyageai:, bedrock:, "
                "or an OpenAI-compatible provider's)"
            )
        return value

    @field_validator("fallback_models", mode="before")
    @classmethod
    def _split_models(cls, value: Any) -> Any:
        """A comma-separated string becomes a list of model strings."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _parse_servers(cls, value: Any) -> Any:
        """The JSON list from the environment (a list passed in code is taken as it is)."""
        if isinstance(value, str):
            if not value.strip():
                return []
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"not JSON ({exc})") from None
        if not isinstance(value, list):
            raise ValueError('must be a JSON list like [{"url": "http://...", "prefix": "crm"}]')
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _unique_prefixes(cls, servers: list[McpServer]) -> list[McpServer]:
        if twice := repeated(s.prefix for s in servers):
            raise ValueError(f"each server needs its own prefix; used more than once: {', '.join(twice)}")
        return servers

    @model_validator(mode="after")
    def _check_safe(self) -> Settings:
        for name, value in (
            ("TRULOOP_RATE_LIMIT_USER", self.rate_limit_user),
            ("TRULOOP_RATE_LIMIT_ADMIN", self.rate_limit_admin),
        ):
            try:
                parse_limit(value)
            except ValueError:
                raise ValueError(
                    f"{name}={value!r} is not a rate like '20/minute' or '100 per hour'"
                ) from None
        if self.channel == "sendbird":
            if missing := self.missing_sendbird():
                raise ValueError(
                    f"{' and '.join(missing)} must be set when TRULOOP_CHANNEL=sendbird "
                    "(the API token also verifies webhook signatures); use TRULOOP_CHANNEL=local "
                    "or `truloop-assistant dev` for local development"
                )
        if not self.jwt_secret and not self.jwt_jwks_url:
            raise ValueError(
                "TRULOOP_JWT_SECRET (HS256) or TRULOOP_JWT_JWKS_URL must be set: "
                "tool results from devices are authenticated with it"
            )
        if self.jwt_secret is not None and len(self.jwt_secret.encode()) < 32:
            raise ValueError(
                "TRULOOP_JWT_SECRET is too short for HS256: use at least 32 bytes "
                "(e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
        return self

    @model_validator(mode="after")
    def _check_models(self) -> Settings:
        """Every model string can be built (checked last: it is the only check that imports much)."""
        for name, value in (
            ("TRULOOP_MODEL", self.model),
            *(("TRULOOP_FALLBACK_MODELS", fallback) for fallback in self.fallback_models),
        ):
            if problem := model_problem(value):
                raise ValueError(f"{name}={value!r}: {problem}; {VALID_MODELS}")
        return self


REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
_SECRET_QUERY = re.compile(r"(?i)([?&]password=)[^&#]*")


def masked_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) shown as ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _SECRET_QUERY.sub(r"\1***", url)
    end = min((rest.index(mark) for mark in "?#" if mark in rest), default=len(rest))
    userinfo, at, location = rest[:end].rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return f"{scheme}://{userinfo}{at}{location}" + _SECRET_QUERY.sub(r"\1***", rest[end:])


VALID_MODELS = (
    "use offline or a pydantic-ai model string provider:model, e.g. openai-chat:gpt-4o-mini, "
    "anthropic:claude-sonnet-4-5, google:gemini-2.5-flash "
    "(other prefixes: openai:, google-cloud:, groq:, mistral:, ollama:, vllm:, ...)"
)
RENAMED_PREFIXES = {"google-gla": "google", "google-vertex": "google-cloud"}
"""Prefixes of older pydantic-ai releases, and what they are called now."""
MODEL_CHECK_S = 5.0
"""How long building a model for the start-up check may take before it is let through unchecked."""


def model_problem(name: str) -> str | None:
    """Why ``name`` cannot become a model (unknown prefix, missing key or package), or None when it can.

    The model is built as the worker will build it, without sending a request; ``offline`` imports nothing.
    """
    if name == "offline":
        return None
    from pydantic_ai.models import parse_model_id
    from pydantic_ai.providers import infer_provider_class

    prefix, _ = parse_model_id(name)
    if prefix is None:
        return "no provider prefix"
    try:
        infer_provider_class(prefix)  # imports the provider's package: slow once, but no I/O
    except ValueError:
        renamed = RENAMED_PREFIXES.get(prefix)
        return f"unknown model provider {prefix!r}" + (f" (now called {renamed}:)" if renamed else "")
    except ImportError as exc:
        return f"this provider's package is not installed ({_first_sentence(str(exc))})"
    # Building the provider reads keys and files; cloud credential discovery may also ask the network,
    # so that part gets a time limit (past it the value is let through; the worker reports it then).
    found: list[str | None] = []
    check = threading.Thread(target=lambda: found.append(_build_problem(name, prefix)), daemon=True)
    check.start()
    check.join(MODEL_CHECK_S)
    return found[0] if found else None


def _build_problem(name: str, prefix: str) -> str | None:
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        infer_model(name)
    except UserError as exc:
        message = str(exc)
        if key := re.search(r"`([A-Z][A-Z0-9_]*)` environment variable", message):
            return f"set {key.group(1)} for the {prefix}: provider"
        return _first_sentence(message)
    except ImportError as exc:
        return f"this provider's package is not installed ({_first_sentence(str(exc))})"
    except Exception as exc:  # a provider's own credential lookup, e.g. Google Cloud's
        return _first_sentence(str(exc)) or type(exc).__name__
    return None


def _first_sentence(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.split(". ")[0].rstrip(".")


def parse_limit(value: str) -> object:
    """A rate such as ``20/minute`` as a ``limits`` item (raises ValueError when it is not one)."""
    from limits import parse

    return parse(value)


def load_settings(**overrides: Any) -> Settings:
    """Build settings, turning validation errors into one readable :class:`ConfigError`."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = validation_problems(exc.errors(), where=_variable)
        if len(lines) == 1:
            raise ConfigError(f"invalid settings: {lines[0]}") from None
        raise ConfigError("invalid settings:\n  " + "\n  ".join(lines)) from None


def _variable(loc: str) -> str:
    """A setting's field path as its variable, e.g. ``TRULOOP_MCP_SERVERS[0].url``."""
    name, *rest = loc.split(".")
    inside = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in rest)
    return f"TRULOOP_{name.upper()}{inside}"


def load_log_settings() -> LogSettings:
    """``TRULOOP_LOG_LEVEL`` and ``TRULOOP_LOG_FORMAT``; a bad value is a :class:`ConfigError` naming it."""
    try:
        return LogSettings()
    except ValidationError as exc:
        lines = validation_problems(exc.errors(), where=lambda loc: f"TRULOOP_{loc.upper()}")
        raise ConfigError("invalid settings: " + "; ".join(lines)) from None


def given_settings() -> dict[str, Any]:
    """The settings set in ``.env`` or the environment (which wins), unchecked and without defaults."""
    return {**DotEnvSettingsSource(Settings)(), **EnvSettingsSource(Settings)()}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
