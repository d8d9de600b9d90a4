"""The server's settings: every ``TRULOOP_`` variable, and the checks that stop an unsafe start."""

from __future__ import annotations

import json
import os
import re
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from ..errors import repeated
from .file_settings import FileSettings
from .guest_settings import GuestSettings
from .mcp_servers import McpServer
from .model_strings import VALID_MODELS, model_form_problem
from .rates import parse_limit
from .secret import reveal
from .sendbird_plans import Plan, budgets, parse_rates
from .sendbird_settings import SendbirdSettings
from .urls import REDIS_SCHEMES, masked_url
from .voice_settings import VoiceSettings

DEFAULT_KEY_PREFIX = "ta"


class Settings(SendbirdSettings, GuestSettings, FileSettings, VoiceSettings):
    """Every ``TRULOOP_`` setting of the server; the secret ones are ``SecretStr`` (see ``secret.py``)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    """Redis for state and the job queue: ``redis://`` / ``rediss://`` (TLS) / ``unix://`` for one
    server; ``redis+cluster://HOST:PORT[,HOST:PORT…]`` (or ``rediss+cluster://``) for a Redis Cluster,
    the listed nodes being seeds."""
    key_prefix: str = Field(default=DEFAULT_KEY_PREFIX, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$")
    """The start of every Redis key (letters, digits, ``_ . : -``; no braces: keys carry hash tags),
    so several deployments can share one Redis; Supermemory's tags carry it too, so deployments that
    share one Supermemory account need prefixes of their own."""
    model: str = "offline"
    """``offline`` or any pydantic-ai model string."""
    fallback_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Comma-separated model strings (``offline`` allowed) tried in order when the model before
    fails with a provider error: 5xx, 429, timeout or lost connection (other 4xx do not fall back)."""
    mcp_servers: Annotated[list[McpServer], NoDecode] = Field(default_factory=list)
    """JSON list of remote MCP servers (Streamable HTTP) whose tools join the server tools:
    ``[{"url": "http://crm.internal/mcp", "prefix": "crm", "headers": {"Authorization": "Bearer …"},
    "confirm": ["delete_*", "send_*"], "no_confirm": ["get_*", "list_*"], "refresh_s": 60}]``; tools are
    named ``<prefix>_<tool>`` (prefix: lower-case letters and digits). Every tool needs the user's yes
    unless its own name matches a ``no_confirm`` pattern or the server marks it read-only (the MCP
    ``readOnlyHint`` tool annotation); one whose own name matches a ``confirm`` pattern needs it even
    then. Patterns are shell-style (``*``, ``?``) and match the unprefixed name whatever its case; an
    MCP tool is never allowed for good ("always"). The tool list is asked for again after
    ``refresh_s`` seconds (default 60). Bad JSON, a bad URL or a prefix used twice stops the server at
    start naming the variable."""
    channel: Literal["sendbird", "local"] = "sendbird"
    """Messaging channel adapter: ``sendbird`` or ``local`` (``dev`` uses ``local``)."""
    sendbird_plan: Plan = "free-trial"
    """The Sendbird plan whose Platform API limits the server keeps to, per HTTP method and app-wide
    across every process (paced in Redis): ``free-trial`` (GET 10, POST/PUT/DELETE 5 per second),
    ``5k``, ``10k``, ``25k``, ``50k`` or ``100k`` (GET 600, POST/PUT/DELETE 200 per second), as the
    Platform API's "Rate limits" page lists them. Deployments sharing one Sendbird application share
    one Redis and key prefix, or split the budgets with ``TRULOOP_SENDBIRD_RATES``."""
    sendbird_rates: str | None = None
    """Calls per second per method, overriding the plan's for those it names (a limit Sendbird has
    raised for your application), e.g. ``GET=600,POST=200,PUT=200,DELETE=200``."""

    jwt_secret: SecretStr | None = None
    """HS256 secret (≥ 32 bytes) for device tokens; ``dev`` makes one up if unset."""
    jwt_jwks_url: str | None = None
    """JWKS URL for RS256/ES256 device tokens (instead of, or besides, the secret)."""
    jwt_audience: str | None = None
    """Expected ``aud`` of device tokens (unset: not checked); with ``TRULOOP_JWT_JWKS_URL`` an
    audience is required (the server refuses to start without one)."""
    jwt_issuer: str | None = None
    """Expected ``iss`` of device tokens (unset: not checked)."""
    jwt_any_audience: bool = False
    """With ``TRULOOP_JWT_JWKS_URL``, accept tokens whatever their ``aud``: only when those keys sign
    for this server alone."""
    jwt_max_ttl_s: int = Field(default=30 * 24 * 3600, ge=1)
    """The longest a device token may still be valid for (30 days): a token whose ``exp`` is further
    away is 401, and ``token --ttl`` cannot go beyond it."""

    sendbird_lookup_patience_s: float = Field(default=180.0, gt=0, le=3600)
    """How long (up to 3600 s) a worker keeps asking Sendbird who is in a channel, through 429s,
    5xx and timeouts, for a message whose webhook listed no members; after that the message is not
    answered."""
    pending_call_ttl_s: int = Field(default=3600, ge=1)
    """Lifetime of a pending device call (≥ 1)."""
    unhandled_call_wait_s: float = Field(default=30.0, gt=0)
    """How long a device request that one of the user's devices answered ``-32601`` (method not
    found) waits for another of their devices; unanswered by then it ends with that error (state
    ``cancelled``) and the turn goes on."""
    rate_limit_user: str = "20/minute"
    """Per-user rate limit of ``tool-message`` and chat turns, e.g. ``20/minute`` or ``100 per hour``."""
    rate_limit_admin: str = "100/minute"
    """The same for admins (the JWT claim ``role: "admin"``, or a directory admin's chat turns)."""

    users_file: str | None = None
    """``dev`` imports this user directory at start (unset: the bundled sample)."""
    users_api_url: str | None = None
    """Use the app's user API instead of the Redis directory."""
    users_api_token: SecretStr | None = None
    """The bearer token sent to the app's user API."""
    kb_dir: str | None = None
    """Folder of Markdown documents searched while the knowledge base in Redis is empty (``kb index``,
    ``kb sync-notion`` fill it); unset: the bundled handbook."""
    embedding_model: str | None = None
    """A pydantic-ai embedding model, e.g. ``openai:text-embedding-3-small`` (its provider's
    variables as pydantic-ai reads them: ``OPENAI_API_KEY``, and ``OPENAI_BASE_URL`` for any
    OpenAI-compatible endpoint); knowledge search then ranks by meaning and by words together,
    ``kb index`` and ``kb sync-notion`` embed what they write, ``doctor`` asks the model. Unset: words
    only, no key needed."""
    supermemory_api_key: SecretStr | None = None
    """Keep memories in Supermemory instead of Redis."""
    supermemory_api_url: str = "https://api.supermemory.ai"
    """The Supermemory API's base URL."""
    supermemory_legacy_tags: bool = False
    """Also read (and forget, and erase) memories Supermemory keeps under their old tag ``user_<id>``,
    saved before tags named the deployment: only for an account that has never served another
    deployment, since those memories cannot be told apart; with the default key prefix only."""
    google_places_api_key: SecretStr | None = None
    """Enables ``search_places`` (Google Places API (New) Text Search)."""
    google_places_api_url: str = "https://places.googleapis.com"
    """The Google Places API's base URL."""
    notion_token: SecretStr | None = None
    """A Notion internal integration's secret, for ``kb sync-notion`` (the server itself never asks
    Notion); ``doctor`` checks it when set."""
    notion_api_url: str = "https://api.notion.com"
    """The Notion API's base URL (tests point it at a local fake)."""
    tool_timeout_s: float = Field(default=10.0, gt=0)
    """Time limit of one server tool call."""
    model_timeout_s: float = Field(default=60.0, gt=0)
    """Time limit of one model request."""
    turn_timeout_s: float = Field(default=180.0, gt=0)
    """Time limit of one whole agent run; past it the user gets “the request timed out”."""
    max_message_chars: int = Field(default=4000, ge=1)
    """Longer chat messages are not run; the user is told why."""
    stream: bool = True
    """Answers appear while the model writes them (``TRULOOP_STREAM``): the first message goes out at
    its first sentence and grows by in-place updates; false: each answer is sent whole, once written."""
    stream_update_s: float = Field(default=1.0, ge=0.2, le=60.0)
    """The shortest time between two updates of a growing message (``TRULOOP_STREAM_UPDATE_S``)."""
    max_calls_per_turn: int = Field(default=8, ge=1)
    """Device calls one step may send; the rest fail at once and the model is told."""
    max_client_failures: int = Field(default=3, ge=1)
    """A device tool that failed this many times in a row on a person's devices (in any of their
    channels) is not sent to them again for an hour; the person saying no (``-32002 UserCanceled``,
    ``{"confirmed": false}``) is not a failure."""

    timezone: str = "Asia/Seoul"
    """The users' default time zone (for people without one in the directory)."""
    history_max_messages: int = Field(default=40, ge=2)
    """Messages of history kept per conversation (cut at turn boundaries)."""
    max_model_requests: int = Field(default=8, ge=1)
    """Model requests per turn, counted across all its resumes (and the relay writer's); past it the
    user is told the request could not be completed."""
    queue_name: str = "truloop"
    """Name of the job queue in Redis."""
    worker_heartbeat_s: int = Field(default=15, ge=1)
    """A worker that stays silent this long is presumed dead and its conversations are taken over."""

    api_docs: bool = True
    """Serve ``/docs``, its Swagger UI files and ``/openapi.json`` on the API port; ``false``: all
    three are 404."""
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """``serve`` answers ``/metrics`` on this port (and ``TRULOOP_METRICS_HOST``) instead of the API's,
    whose ``/metrics`` is then 404; with ``--workers N`` the one endpoint sums every process. ``dev``
    ignores it."""
    metrics_host: str = "127.0.0.1"
    """The address ``TRULOOP_METRICS_PORT`` listens on."""

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

    @field_validator("sendbird_rates")
    @classmethod
    def _known_rates(cls, value: str | None) -> str | None:
        value = (value or "").strip() or None
        if value is not None:
            parse_rates(value)
        return value

    @property
    def sendbird_budgets(self) -> dict[str, float]:
        """Platform API calls per second for each HTTP method: the plan's, or as set outright."""
        return budgets(self.sendbird_plan, self.sendbird_rates)

    @model_validator(mode="after")
    def _no_retired(self) -> Settings:
        """Settings that are gone stop the start, naming what replaced them (they would be ignored)."""
        if given := retired_settings(self.model_config.get("env_file")):
            raise ValueError(
                f"{' and '.join(given)} no longer exist: Sendbird limits each HTTP method on its own, so "
                "set TRULOOP_SENDBIRD_PLAN to your plan (free-trial, 5k, 10k, 25k, 50k or 100k) or "
                "TRULOOP_SENDBIRD_RATES to its calls per second (e.g. GET=600,POST=200,PUT=200,DELETE=200)"
            )
        return self

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
        if self.sms == "twilio" and (missing := self.missing_sms()):
            raise ValueError(
                f"{' and '.join(missing)} must be set when TRULOOP_SMS=twilio (the auth token also "
                "checks Twilio's webhook signatures, over TRULOOP_PUBLIC_URL)"
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
        if self.supermemory_legacy_tags and self.key_prefix != DEFAULT_KEY_PREFIX:
            raise ValueError(
                f"TRULOOP_SUPERMEMORY_LEGACY_TAGS=true needs the default TRULOOP_KEY_PREFIX "
                f"({DEFAULT_KEY_PREFIX!r}, not {self.key_prefix!r}): memories under the old tags are every "
                "deployment's of the account, and one with a prefix of its own shares with others"
            )
        if self.jwt_secret is not None and len(reveal(self.jwt_secret).encode()) < 32:
            raise ValueError(
                "TRULOOP_JWT_SECRET is too short for HS256: use at least 32 bytes "
                "(e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
        return self

    def named_model_strings(self) -> list[tuple[str, str]]:
        """Every model string, beside the variable that sets it."""
        fallbacks = [("TRULOOP_FALLBACK_MODELS", fallback) for fallback in self.fallback_models]
        return [("TRULOOP_MODEL", self.model), *fallbacks]

    @model_validator(mode="after")
    def _check_models(self) -> Settings:
        """Every model string reads as one (``provider:model``, a known provider). Nothing is imported:
        :func:`~.reading.load_settings` builds the models too, for the processes that run them."""
        for name, value in self.named_model_strings():
            if problem := model_form_problem(value):
                raise ValueError(f"{name}={value!r}: {problem}; {VALID_MODELS}")
        return self


RETIRED = ("TRULOOP_SENDBIRD_RATE", "TRULOOP_SENDBIRD_WRITE_RATE")
"""Variables of earlier releases that a start refuses (the per-method budgets replaced them)."""


def retired_settings(env_file: object) -> list[str]:
    """Those of :data:`RETIRED` set in the environment or the ``.env`` file."""
    from dotenv import dotenv_values

    given = set(os.environ)
    if isinstance(env_file, str) and os.path.isfile(env_file):
        given |= set(dotenv_values(env_file))
    return [name for name in RETIRED if name in given]
