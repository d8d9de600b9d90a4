"""Does Sendbird accept the API token, is it the master token, does the bot user exist, how long may
a message be, does the webhook send the categories the server reads, and how close is the bot to the
group channels it may join (``channel_join_check``)?

Sendbird signs webhooks with the master API token, so a secondary token (which every other call
accepts) leaves the server refusing every webhook with 401. Only the master token may list the
application's API tokens (``GET /v3/applications/api_tokens``): that tells the two apart. The
application's ``max_message_length`` is in its global settings (``GET /v3/applications/settings_global``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .channel_join_check import check_channel_joins
from .outcome import Check

if TYPE_CHECKING:
    import httpx

    from ...config import SendbirdSettings

SENDBIRD_TIMEOUT_S = 5.0
_USER_NOT_FOUND = 400201
_INVALID_TOKEN_CODES = {400401, 400402}
_DASHBOARD_TOKENS = "dashboard: Settings > Application > General > API tokens"


def check_sendbird(settings: SendbirdSettings | None) -> Iterator[Check]:
    """The token and the bot user; when the token is accepted, also its kind and the message length,
    and when the bot user exists, its group channels beside the limit."""
    import httpx

    from ...config import reveal

    settings_or_problem = _sendbird_settings(settings)
    if isinstance(settings_or_problem, Check):
        yield settings_or_problem
        return
    settings = settings_or_problem
    with httpx.Client(
        base_url=settings.sendbird_base_url,
        headers={"Api-Token": reveal(settings.sendbird_api_token)},
        timeout=SENDBIRD_TIMEOUT_S,
    ) as client:
        check, accepted = _check_bot(client, settings)
        yield check
        if accepted:
            yield _check_master(client)
            yield _check_message_length(client, settings)
            yield _check_webhook_categories(client)
        if check.status == "ok":
            yield check_channel_joins(client, settings)


def _sendbird_settings(settings: SendbirdSettings | None) -> SendbirdSettings | Check:
    """The settings the checks need, or the failed check that says what is missing."""
    from pydantic import ValidationError

    from ...config import ConfigError, SendbirdSettings
    from ...errors import validation_problems

    if settings is None:
        try:
            settings = SendbirdSettings()
        except ValidationError as exc:
            lines = validation_problems(exc.errors(), where=lambda loc: f"TRULOOP_{loc.upper()}")
            return Check("sendbird", "FAIL", "; ".join(lines))
        except ConfigError as exc:  # a secret's file that cannot be used
            return Check("sendbird", "FAIL", str(exc).removeprefix("invalid settings: "))
    if missing := settings.missing_sendbird():
        return Check("sendbird", "FAIL", f"{' and '.join(missing)} must be set when TRULOOP_CHANNEL=sendbird")
    return settings


def _check_bot(client: httpx.Client, settings: SendbirdSettings) -> tuple[Check, bool]:
    """GET the bot user with the API token: is the token accepted (the flag), does the bot exist?"""
    import httpx

    base = settings.sendbird_base_url
    bot = settings.sendbird_bot_user_id
    try:
        response = client.get(f"/v3/users/{quote(bot, safe='')}")
    except httpx.HTTPError as exc:
        override = " and TRULOOP_SENDBIRD_API_URL" if settings.sendbird_api_url else ""
        detail = (
            f"cannot reach Sendbird at {base} ({exc or type(exc).__name__}): "
            f"check TRULOOP_SENDBIRD_APP_ID{override} and the network"
        )
        return Check("sendbird", "FAIL", detail), False
    status, code, message = response.status_code, *_error(response)
    if status == 200:
        return Check("sendbird", "ok", f"the token is accepted and bot user {bot!r} exists at {base}"), True
    if status in (401, 403) or code in _INVALID_TOKEN_CODES:
        detail = (
            f"the token is refused ({status}): set TRULOOP_SENDBIRD_API_TOKEN to the master API token "
            f"of application {settings.sendbird_app_id} (dashboard: Settings > Application > General)"
        )
        return Check("sendbird", "FAIL", detail), False
    if status == 404 or code == _USER_NOT_FOUND:
        return Check(
            "sendbird", "FAIL", f"bot user {bot!r} missing: run truloop-assistant sendbird setup"
        ), True
    return Check("sendbird", "FAIL", f"Sendbird at {base} answered {status}: {message}"), False


def _check_master(client: httpx.Client) -> Check:
    """Only the master token may list the API tokens; any other answer is a token that signs nothing."""
    import httpx

    try:
        response = client.get("/v3/applications/api_tokens")
    except httpx.HTTPError as exc:
        return Check("sendbird token", "skip", f"cannot tell the master token from a secondary one ({exc})")
    if response.status_code == 200:
        return Check(
            "sendbird token", "ok", "the master API token (it verifies Sendbird's webhook signatures)"
        )
    if response.status_code >= 500 or response.status_code == 429:
        return Check(
            "sendbird token",
            "skip",
            f"cannot tell the master token now: Sendbird answered {response.status_code}",
        )
    return Check(
        "sendbird token",
        "FAIL",
        "TRULOOP_SENDBIRD_API_TOKEN is a secondary API token, but Sendbird signs webhooks with the master "
        "API token: every webhook would be refused with 401. Set it to the master API token "
        f"({_DASHBOARD_TOKENS})",
    )


def _check_message_length(client: httpx.Client, settings: SendbirdSettings) -> Check:
    """The application's ``max_message_length`` against the longest message the server sends."""
    import httpx

    try:
        response = client.get("/v3/applications/settings_global")
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        return Check("sendbird messages", "skip", f"cannot read the application's settings ({exc})")
    limit = _max_message_length(body)
    if limit is None:
        return Check(
            "sendbird messages",
            "skip",
            f"the application's max_message_length is not known (Sendbird answered {response.status_code})",
        )
    ours = settings.sendbird_max_message_chars
    if ours > limit:
        return Check(
            "sendbird messages",
            "FAIL",
            f"TRULOOP_SENDBIRD_MAX_MESSAGE_CHARS={ours} is larger than the application's max_message_length "
            f"{limit}: Sendbird would refuse the longer messages. Set it to {limit} or less, or raise the "
            "application's max_message_length",
        )
    return Check("sendbird messages", "ok", f"the application's max_message_length is {limit} characters")


def _check_webhook_categories(client: httpx.Client) -> Check:
    """The webhook's enabled categories (``GET /v3/applications/settings/webhook``) against those the
    server reads: without edits and deletions, a person's changed or deleted message is run as sent."""
    import httpx

    from ..sendbird import WEBHOOK_CATEGORIES

    try:
        response = client.get("/v3/applications/settings/webhook")
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        return Check("sendbird webhook", "skip", f"cannot read the webhook settings ({exc})")
    webhook = body.get("webhook") if isinstance(body, dict) else None
    enabled = webhook.get("enabled_events") if isinstance(webhook, dict) else None
    if not isinstance(enabled, list):
        return Check(
            "sendbird webhook", "skip", f"the webhook's categories are not known ({response.status_code})"
        )
    if missing := [c for c in WEBHOOK_CATEGORIES if c not in enabled and "*" not in enabled]:
        return Check(
            "sendbird webhook",
            "WARN",
            f"the webhook does not send {', '.join(missing)}: run truloop-assistant sendbird setup, or "
            "enable them in the dashboard (Settings > Chat > Webhooks)",
        )
    return Check("sendbird webhook", "ok", f"the webhook sends {', '.join(WEBHOOK_CATEGORIES)}")


def _max_message_length(body: Any) -> int | None:
    """``max_message_length`` at the top of the settings, or in an object one level down."""
    if not isinstance(body, dict):
        return None
    for place in (body, *(v for v in body.values() if isinstance(v, dict))):
        value = place.get("max_message_length")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _error(response: Any) -> tuple[int | None, str]:
    """The Sendbird error code and message of a response (``None`` and the reason when it has none)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return None, response.reason_phrase or "no details"
    code = body.get("code")
    return (code if isinstance(code, int) else None), str(body.get("message") or "no details")
