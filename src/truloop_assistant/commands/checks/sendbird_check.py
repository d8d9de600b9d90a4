"""Does Sendbird accept the API token, and does the bot user exist?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .outcome import Check

if TYPE_CHECKING:
    from ...config import SendbirdSettings

SENDBIRD_TIMEOUT_S = 5.0
_USER_NOT_FOUND = 400201
_INVALID_TOKEN_CODES = {400401, 400402}


def check_sendbird(settings: SendbirdSettings | None) -> Check:
    """GET the bot user with the API token: is the token accepted, does the bot exist?"""
    import httpx
    from pydantic import ValidationError

    from ...config import ConfigError, SendbirdSettings, reveal
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
    base = settings.sendbird_base_url
    bot = settings.sendbird_bot_user_id
    try:
        response = httpx.get(
            f"{base}/v3/users/{quote(bot, safe='')}",
            headers={"Api-Token": reveal(settings.sendbird_api_token)},
            timeout=SENDBIRD_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        override = " and TRULOOP_SENDBIRD_API_URL" if settings.sendbird_api_url else ""
        return Check(
            "sendbird",
            "FAIL",
            f"cannot reach Sendbird at {base} ({exc or type(exc).__name__}): "
            f"check TRULOOP_SENDBIRD_APP_ID{override} and the network",
        )
    status, code, message = response.status_code, *_error(response)
    if status == 200:
        return Check("sendbird", "ok", f"the token is accepted and bot user {bot!r} exists at {base}")
    if status in (401, 403) or code in _INVALID_TOKEN_CODES:
        return Check(
            "sendbird",
            "FAIL",
            f"the token is refused ({status}): set TRULOOP_SENDBIRD_API_TOKEN to the master API token "
            f"of application {settings.sendbird_app_id} (dashboard: Settings > Application > General)",
        )
    if status == 404 or code == _USER_NOT_FOUND:
        return Check("sendbird", "FAIL", f"bot user {bot!r} missing: run truloop-assistant sendbird setup")
    return Check("sendbird", "FAIL", f"Sendbird at {base} answered {status}: {message}")


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
