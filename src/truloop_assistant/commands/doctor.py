"""``truloop-assistant doctor``: check the settings, Redis, the model's key and the Sendbird token.

One line per check, ``ok``, ``WARN`` (works, but act soon), ``FAIL`` or ``skip``, saying what to fix;
exit 1 when a check fails. The embedding model is asked when ``TRULOOP_EMBEDDING_MODEL`` is set (and
the transcription model, with no audio, when ``TRULOOP_TRANSCRIPTION_MODEL`` is), the
Notion token is checked when one is set, and each MCP server of ``TRULOOP_MCP_SERVERS``. The checks
themselves are in ``checks/``.
Light to import: the command line lists it without loading the libraries the checks use.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .checks.mcp_check import check_mcp
from .checks.model_check import check_embedding, check_models
from .checks.notion_check import check_notion
from .checks.outcome import Check
from .checks.redis_check import RedisProblem, RedisUnreachable, check_redis, ping_redis
from .checks.sendbird_check import check_sendbird
from .checks.transcription_check import check_transcription
from .checks.twilio_check import check_twilio

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["Check", "RedisProblem", "RedisUnreachable", "add_parser", "checks", "ping_redis", "run"]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``doctor``."""
    subparsers.add_parser(
        "doctor",
        help="check the settings, Redis, the model's key and the Sendbird token, and say what to fix",
        description="Check the settings, Redis, the model's key and the Sendbird token; exit 1 if any fails.",
    )


def run(args: argparse.Namespace) -> int:
    """Print one line per check; 0 when none failed, else 1."""
    failed = False
    for check in checks():
        print(check.render(), flush=True)
        failed = failed or check.status == "FAIL"
    return 1 if failed else 0


def checks() -> Iterator[Check]:
    """The checks in order; each is made even when the settings are invalid, from the values given."""
    from ..config import ConfigError, Settings, given_settings, load_settings, masked_url

    settings: Settings | None = None
    try:
        settings = load_settings()
    except ConfigError as exc:
        yield Check("settings", "FAIL", "; ".join(line.strip() for line in str(exc).splitlines()))
    given: dict[str, Any] = {} if settings else given_settings(strict=False)

    def value(name: str) -> Any:
        if settings is not None:
            return getattr(settings, name)
        return given.get(name) or Settings.model_fields[name].get_default(call_default_factory=True)

    redis_url = str(value("redis_url"))
    model = str(value("model"))
    channel = str(value("channel"))
    fallbacks = value("fallback_models")
    if isinstance(fallbacks, str):
        fallbacks = [name.strip() for name in fallbacks.split(",") if name.strip()]
    if settings is not None:
        yield Check("settings", "ok", f"channel {channel}, model {model}, Redis {masked_url(redis_url)}")
    yield check_redis(redis_url)
    yield check_models(model, list(fallbacks))
    if embedding_model := value("embedding_model"):
        yield check_embedding(str(embedding_model))
    if transcription_model := value("transcription_model"):
        yield check_transcription(str(transcription_model))
    yield check_notion(value("notion_token"), str(value("notion_api_url")))
    if str(value("sms")) == "twilio":  # (SMS off: nothing to say)
        yield check_twilio(
            account_sid=value("twilio_account_sid"),
            auth_token=value("twilio_auth_token"),
            api_url=str(value("twilio_api_url")),
            public_url=value("public_url"),
        )
    if channel != "sendbird":
        yield Check("sendbird", "skip", f"TRULOOP_CHANNEL={channel}: Sendbird is not used")
    else:
        yield from check_sendbird(settings)
    for server in settings.mcp_servers if settings is not None else []:
        yield check_mcp(server)
