"""Does Twilio accept the account and token of ``TRULOOP_SMS=twilio``, and is the account active?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .outcome import Check

if TYPE_CHECKING:
    from pydantic import SecretStr

TWILIO_TIMEOUT_S = 5.0


def check_twilio(
    *,
    account_sid: str | None,
    auth_token: SecretStr | str | None,
    api_url: str,
    public_url: str | None,
) -> Check:
    """``TRULOOP_SMS=twilio``: does Twilio accept the account SID and auth token (``GET /2010-04-01/
    Accounts/{sid}.json``, the Account resource), is the account active, and is the public URL one
    Twilio can call (https)?"""
    if not account_sid or not auth_token:
        missing = "TRULOOP_TWILIO_ACCOUNT_SID and TRULOOP_TWILIO_AUTH_TOKEN must be set"
        return Check("twilio", "FAIL", missing)
    import httpx

    from ...config import reveal

    base = api_url.rstrip("/")
    try:
        response = httpx.get(
            f"{base}/2010-04-01/Accounts/{account_sid}.json",
            auth=(account_sid, auth_token if isinstance(auth_token, str) else reveal(auth_token)),
            timeout=TWILIO_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        return Check(
            "twilio",
            "FAIL",
            f"cannot reach Twilio at {base} ({exc or type(exc).__name__}): "
            "check TRULOOP_TWILIO_API_URL and the network",
        )
    body = _json(response)
    if response.status_code == 401:
        return Check(
            "twilio",
            "FAIL",
            "the account SID and auth token are refused (401): set TRULOOP_TWILIO_AUTH_TOKEN to the "
            "account's Auth Token (Twilio Console, Account Info); it also checks Twilio's webhook signatures",
        )
    if response.status_code == 404:
        return Check(
            "twilio", "FAIL", f"Twilio has no account {account_sid} (404): check TRULOOP_TWILIO_ACCOUNT_SID"
        )
    if response.status_code != 200:
        detail = body.get("message") or response.reason_phrase or "no details"
        return Check("twilio", "FAIL", f"Twilio at {base} answered {response.status_code}: {detail}")
    status = str(body.get("status") or "active")
    name = body.get("friendly_name") or account_sid
    if status != "active":
        return Check("twilio", "FAIL", f"the account {name!r} is {status}: Twilio sends no texts for it")
    if not public_url or not public_url.startswith("https://"):
        return Check(
            "twilio",
            "WARN",
            f"the account {name!r} is active, but TRULOOP_PUBLIC_URL ({public_url or 'unset'}) is not "
            "https: Twilio calls webhooks over the public internet, and guests open their links there",
        )
    webhook = f"{public_url.rstrip('/')}/api/v1/webhooks/twilio"
    return Check(
        "twilio",
        "ok",
        f"the account {name!r} is active; set its number's incoming-message webhook to {webhook}",
    )


def _json(response: Any) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
