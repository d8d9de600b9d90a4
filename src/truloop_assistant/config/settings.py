"""The server's settings: every ``TRULOOP_`` variable, and the checks that stop an unsafe start."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from ..errors import repeated
from .mcp_servers import McpServer
from .model_strings import VALID_MODELS, model_problem
from .rates import parse_limit
from .secret import reveal
from .sendbird_settings import SendbirdSettings
from .urls import REDIS_SCHEMES, masked_url


class Settings(SendbirdSettings):
    """Every ``TRULOOP_`` setting of the server; the secret ones are ``SecretStr`` (see ``secret.py``)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = Field(default="ta", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$")
    """The start of every Redis key; letters, digits, ``_ . : -`` (no braces: keys carry hash tags)."""
    model: str = "offline"
    fallback_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Tried in order when the primary model fails with a provider error (``TRULOOP_FALLBACK_MODELS``)."""
    mcp_servers: Annotated[list[McpServer], NoDecode] = Field(default_factory=list)
    """Remote MCP servers whose tools join the server tools (``TRULOOP_MCP_SERVERS``, a JSON list)."""
    channel: Literal["sendbird", "local"] = "sendbird"
    sendbird_rate: float = Field(default=20.0, gt=0)
    """Platform API calls per second, app-wide across every process (``TRULOOP_SENDBIRD_RATE``): set it
    to the plan's limit."""
    sendbird_write_rate: float = Field(default=5.0, gt=0)
    """Message sends, updates and channel creations per second among them, app-wide
    (``TRULOOP_SENDBIRD_WRITE_RATE``): Sendbird keeps these at about 5/s whatever the plan."""

    jwt_secret: SecretStr | None = None
    jwt_jwks_url: str | None = None
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_any_audience: bool = False
    """Accept tokens signed by the JWKS's keys whatever their ``aud`` (only when those keys sign for
    this server alone): without it, ``TRULOOP_JWT_JWKS_URL`` needs ``TRULOOP_JWT_AUDIENCE``."""
    jwt_max_ttl_s: int = Field(default=30 * 24 * 3600, ge=1)
    """The longest a device token may still be valid for: a token whose ``exp`` is further away is refused."""

    sendbird_lookup_patience_s: float = Field(default=180.0, gt=0, le=3600)
    """How long the worker keeps asking Sendbird (429, 5xx, timeouts) who is in a channel, for a
    message whose webhook did not list its members; after that the message is not answered."""
    pending_call_ttl_s: int = Field(default=3600, ge=1)
    unhandled_call_wait_s: float = Field(default=30.0, gt=0)
    """How long a call one device answered -32601 (method not found) waits for another device."""
    rate_limit_user: str = "20/minute"
    rate_limit_admin: str = "100/minute"

    users_file: str | None = None
    users_api_url: str | None = None
    users_api_token: SecretStr | None = None
    kb_dir: str | None = None
    embedding_model: str | None = None
    """A pydantic-ai embedding model (``openai:text-embedding-3-small``): knowledge search by meaning too."""
    supermemory_api_key: SecretStr | None = None
    supermemory_api_url: str = "https://api.supermemory.ai"
    google_places_api_key: SecretStr | None = None
    google_places_api_url: str = "https://places.googleapis.com"
    notion_token: SecretStr | None = None
    """A Notion integration's secret, for ``kb sync-notion`` (the server never asks Notion)."""
    notion_api_url: str = "https://api.notion.com"
    tool_timeout_s: float = Field(default=10.0, gt=0)
    model_timeout_s: float = Field(default=60.0, gt=0)
    turn_timeout_s: float = Field(default=180.0, gt=0)
    max_message_chars: int = Field(default=4000, ge=1)
    stream: bool = True
    """Answers appear while the model writes them (``TRULOOP_STREAM``): the first message goes out at
    its first sentence and grows by in-place updates; false: each answer is sent whole, once written."""
    stream_update_s: float = Field(default=1.0, ge=0.2, le=60.0)
    """The shortest time between two updates of a growing message (``TRULOOP_STREAM_UPDATE_S``)."""
    max_calls_per_turn: int = Field(default=8, ge=1)
    max_client_failures: int = Field(default=3, ge=1)

    timezone: str = "Asia/Seoul"
    history_max_messages: int = Field(default=40, ge=2)
    max_model_requests: int = Field(default=8, ge=1)
    queue_name: str = "truloop"
    worker_heartbeat_s: int = Field(default=15, ge=1)

    api_docs: bool = True
    """``/docs``, its Swagger UI files and ``/openapi.json`` on the API port (``TRULOOP_API_DOCS``)."""
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """``serve`` answers ``/metrics`` on this port instead of the API's (``TRULOOP_METRICS_PORT``)."""
    metrics_host: str = "127.0.0.1"
    """Where ``TRULOOP_METRICS_PORT`` listens (``TRULOOP_METRICS_HOST``)."""

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
                    "(the API token also verifies webhook signatures); for local development run "
                    "`truloop-assistant dev` (the local channel)"
                )
        if not reveal(self.jwt_secret) and not self.jwt_jwks_url:
            raise ValueError(
                "TRULOOP_JWT_SECRET (HS256) or TRULOOP_JWT_JWKS_URL must be set: "
                "tool results from devices are authenticated with it"
            )
        if self.jwt_jwks_url and not self.jwt_audience and not self.jwt_any_audience:
            raise ValueError(
                "TRULOOP_JWT_AUDIENCE must be set when TRULOOP_JWT_JWKS_URL is: without it any token the "
                "JWKS's keys signed is accepted, one minted for another app included; set it to the 'aud' "
                "your backend puts in device tokens (or TRULOOP_JWT_ANY_AUDIENCE=true when those keys sign "
                "for this server alone)"
            )
        if self.jwt_secret is not None and len(reveal(self.jwt_secret).encode()) < 32:
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
