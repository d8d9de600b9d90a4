"""``truloop-assistant sendbird setup``: create or update the bot user and turn the webhook on.

The webhook settings (``PUT /v3/applications/settings/webhook``) get the server's URL, the event
categories it handles (messages sent, edited and deleted; added to those already enabled) and
"include members", so a 1:1 message names its members and needs no channel lookup. The SDK has no
call for them: they go through its HTTP client.

Synchronous on purpose: it runs once from a terminal and uses the (synchronous) Sendbird Platform SDK.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ValidationError

from ..config import ConfigError, SendbirdSettings, reveal
from ..errors import OperatorError, validation_problems

WEBHOOK_PATH = "/api/v1/webhooks/sendbird"
WEBHOOK_CATEGORIES = (
    "group_channel:message_send",
    "group_channel:message_update",  # a person's edit: a waiting turn takes it, history shows it
    "group_channel:message_delete",  # a person's deletion: a waiting turn is dropped, history forgets
)
DEFAULT_NICKNAME = "Truloop"

_USER_NOT_FOUND = 400201
_INVALID_TOKEN_CODES = {400401, 400402}


def load_admin_settings(**overrides: Any) -> SendbirdSettings:
    """Read the Sendbird settings; a missing app id or token is a :class:`ConfigError` naming it."""
    try:
        settings = SendbirdSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(validation_problems(exc.errors(), where=lambda loc: f"TRULOOP_{loc.upper()}"))
        raise ConfigError(f"invalid Sendbird settings: {problems}") from None
    if missing := settings.missing_sendbird():
        raise ConfigError(
            f"{' and '.join(missing)} must be set for `sendbird setup`: the application id and the "
            "master API token are in the Sendbird dashboard under Settings > Application > General"
        )
    if not settings.sendbird_bot_user_id:
        raise ConfigError("TRULOOP_SENDBIRD_BOT_USER_ID must not be empty")
    return settings


class SetupError(OperatorError):
    """An expected failure of the setup (bad token, unreachable host, bad URL); the message says why."""


@dataclass(frozen=True)
class SetupReport:
    """What the setup did, and what is left to configure in the Sendbird dashboard."""

    action: Literal["created", "updated"]
    app_id: str
    bot_user_id: str
    nickname: str
    profile_url: str | None
    webhook_url: str
    enabled_events: tuple[str, ...] = WEBHOOK_CATEGORIES
    replaced_url: str | None = None
    """The webhook URL the application had before, when it was another one."""

    def render(self) -> str:
        """The report as printed by the command."""
        profile = f", profile image {self.profile_url}" if self.profile_url else ""
        replaced = f" (it was {self.replaced_url})" if self.replaced_url else ""
        return (
            f"Sendbird application {self.app_id}: bot user {self.bot_user_id!r} {self.action} "
            f"(nickname {self.nickname!r}{profile}).\n"
            "\n"
            "Webhooks (dashboard: Settings > Chat > Webhooks) are on:\n"
            f"  URL              {self.webhook_url}{replaced}\n"
            f"  event categories {', '.join(self.enabled_events)}\n"
            "  include members: on\n"
            "\n"
            "Sendbird signs every webhook (x-sendbird-signature) with the application's master API token:\n"
            "TRULOOP_SENDBIRD_API_TOKEN on the server must be that master token, not a secondary one,\n"
            "or every webhook is rejected with 401."
        )


def webhook_url(public_url: str) -> str:
    """The webhook URL for a public base URL such as ``https://assistant.example.com``."""
    parts = urlsplit(public_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SetupError(
            f"--public-url must be an absolute http(s) URL such as https://assistant.example.com, "
            f"got {public_url!r}"
        )
    if parts.query or parts.fragment:
        raise SetupError(f"--public-url must not have a query or fragment, got {public_url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}{WEBHOOK_PATH}"


def setup_sendbird(
    settings: SendbirdSettings,
    *,
    public_url: str,
    nickname: str = DEFAULT_NICKNAME,
    profile_url: str | None = None,
    timeout_s: float = 15.0,
) -> SetupReport:
    """Create the bot user if it is missing, else update its nickname (and profile URL when given)."""
    import urllib3
    from sendbird_platform_sdk import ApiClient, Configuration
    from sendbird_platform_sdk.api.user_api import UserApi
    from sendbird_platform_sdk.exceptions import ApiException, OpenApiException
    from sendbird_platform_sdk.model.create_a_user_request import CreateAUserRequest
    from sendbird_platform_sdk.model.update_a_user_request import UpdateAUserRequest

    url = webhook_url(public_url)
    if not nickname.strip():
        raise SetupError("--nickname must not be empty")
    base_url = settings.sendbird_base_url
    bot = settings.sendbird_bot_user_id
    config = Configuration(host=base_url)
    config.retries = 0  # one attempt: an operator at a terminal wants the error, not retry warnings
    # The SDK ignores Configuration(api_key=...): the token goes with every call. Sendbird answers
    # some fields with null, which the SDK's return-type check rejects, so that check is off.
    call: dict[str, Any] = {
        "api_token": reveal(settings.sendbird_api_token),
        "_request_timeout": (5.0, timeout_s),
        "_check_return_type": False,
    }
    try:
        with ApiClient(config) as client:
            users = UserApi(client)
            try:
                users.view_a_user(bot, **call)
                exists = True
            except ApiException as exc:
                if _error_code(exc) != _USER_NOT_FOUND:
                    raise
                exists = False
            if exists:
                fields: dict[str, Any] = {"nickname": nickname}
                if profile_url is not None:
                    fields["profile_url"] = profile_url
                users.update_a_user(bot, update_a_user_request=UpdateAUserRequest(**fields), **call)
            else:
                request = CreateAUserRequest(nickname=nickname, user_id=bot, profile_url=profile_url or "")
                users.create_a_user(create_a_user_request=request, **call)
            before, events = _turn_on_webhook(client, base_url, call, url=url)
    except ApiException as exc:
        raise SetupError(_explain(exc, settings)) from None
    except urllib3.exceptions.HTTPError as exc:
        reason = getattr(exc, "reason", None) or exc
        raise SetupError(
            f"could not reach Sendbird at {base_url} ({reason}); check TRULOOP_SENDBIRD_APP_ID"
            f"{' and TRULOOP_SENDBIRD_API_URL' if settings.sendbird_api_url else ''} and the network"
        ) from None
    except OpenApiException as exc:
        raise SetupError(f"unexpected answer from Sendbird at {base_url}: {exc}") from None
    return SetupReport(
        action="updated" if exists else "created",
        app_id=settings.sendbird_app_id or "",
        bot_user_id=bot,
        nickname=nickname,
        profile_url=profile_url or None,
        webhook_url=url,
        enabled_events=events,
        replaced_url=before if before and before != url else None,
    )


def _turn_on_webhook(
    client: Any, base_url: str, call: dict[str, Any], *, url: str
) -> tuple[str, tuple[str, ...]]:
    """Webhooks on, at ``url``, with "include members" and our categories added to those enabled.

    Returns the URL set before and the categories now enabled.
    """
    path = f"{base_url}/v3/applications/settings/webhook"
    headers = {"Api-Token": call["api_token"], "Accept": "application/json"}
    timeout = call["_request_timeout"]
    current = _webhook_of(client.rest_client.GET(path, headers=headers, _request_timeout=timeout))
    enabled = current.get("enabled_events")
    kept = [e for e in enabled if isinstance(e, str)] if isinstance(enabled, list) else []
    events = tuple(dict.fromkeys([*kept, *WEBHOOK_CATEGORIES]))
    body = {"enabled": True, "url": url, "include_members": True, "enabled_events": list(events)}
    client.rest_client.PUT(
        path,
        headers={**headers, "Content-Type": "application/json"},
        body=body,
        _request_timeout=timeout,
    )
    before = current.get("url")
    return (before if isinstance(before, str) else ""), events


def _webhook_of(response: Any) -> dict[str, Any]:
    """The ``webhook`` object of Sendbird's answer (empty when it has none)."""
    try:
        body = json.loads(response.data)
    except (TypeError, ValueError):
        return {}
    webhook = body.get("webhook") if isinstance(body, dict) else None
    return webhook if isinstance(webhook, dict) else {}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sendbird setup --public-url URL [--nickname N] [--profile-url U]``."""
    sendbird = subparsers.add_parser("sendbird", help="Sendbird administration")
    sendbird_sub = sendbird.add_subparsers(dest="sendbird_command", required=True)
    setup = sendbird_sub.add_parser("setup", help="create or update the bot user; turn the webhook on")
    setup.add_argument(
        "--public-url", required=True, help="public base URL, e.g. https://assistant.example.com"
    )
    setup.add_argument("--nickname", default=DEFAULT_NICKNAME, help="the bot's nickname (default: Truloop)")
    setup.add_argument("--profile-url", default=None, help="the bot's profile image URL")


def run(args: argparse.Namespace) -> int:
    """Run a ``sendbird`` subcommand (only ``setup``)."""
    return run_setup(public_url=args.public_url, nickname=args.nickname, profile_url=args.profile_url)


def run_setup(*, public_url: str, nickname: str = DEFAULT_NICKNAME, profile_url: str | None = None) -> int:
    """The command: print the report and return 0, or print the reason and return 1."""
    settings = load_admin_settings()
    try:
        report = setup_sendbird(settings, public_url=public_url, nickname=nickname, profile_url=profile_url)
    except SetupError as exc:
        print(f"truloop-assistant: {exc}", file=sys.stderr)
        return 1
    print(report.render())
    return 0


def _error_body(exc: Any) -> dict[str, Any]:
    raw = getattr(exc, "body", None)
    try:
        body = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _error_code(exc: Any) -> int | None:
    code = _error_body(exc).get("code")
    return code if isinstance(code, int) else None


def _explain(exc: Any, settings: SendbirdSettings) -> str:
    status = getattr(exc, "status", None) or 0
    body = _error_body(exc)
    message = str(body.get("message") or getattr(exc, "reason", None) or "no details").strip()
    if status == 401 or body.get("code") in _INVALID_TOKEN_CODES:
        return (
            f"Sendbird rejected the API token ({status}): check TRULOOP_SENDBIRD_API_TOKEN "
            f"(the master API token of application {settings.sendbird_app_id}, "
            f"Settings > Application > General in the dashboard). Sendbird said: {message}"
        )
    if status == 403:
        return (
            f"Sendbird refused the request (403): the API token may lack permission. Sendbird said: {message}"
        )
    if status == 0:
        return f"could not talk to Sendbird at {settings.sendbird_base_url}: {message}"
    if status >= 500:
        return f"Sendbird had a server error ({status}); try again later. Sendbird said: {message}"
    return f"Sendbird answered {status}: {message}"
