"""How guests without the app are reached: by phone number, by SMS through Twilio, and from a link."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from .log_settings import LogSettings
from .secret import reveal


class GuestSettings(LogSettings):
    """Guests reached where they are (by text message, on their guest page)."""

    default_region: str = Field(
        default="KR",
        pattern=r"^[A-Z]{2}$",
        description="The country (ISO 3166 alpha-2) a guest's phone number is read in when the "
        "organizer's own country is not known (from their number in the directory): "
        "``010-5550-1234`` is ``+821055501234`` in ``KR``.",
    )
    sms: Literal["off", "twilio"] = "off"
    """``twilio``: guests invited by phone number get their invitation by SMS and may answer by SMS
    (needs ``TRULOOP_TWILIO_ACCOUNT_SID``, ``TRULOOP_TWILIO_AUTH_TOKEN``, ``TRULOOP_TWILIO_FROM`` and
    ``TRULOOP_PUBLIC_URL``); ``off``: a phone number invites nobody (the tool says so)."""
    twilio_account_sid: str | None = Field(default=None, pattern=r"^AC[0-9a-fA-F]{32}$")
    """The Twilio account's SID (``AC`` and 32 hex digits)."""
    twilio_auth_token: SecretStr | None = None
    """The Twilio account's auth token: it calls the Messages API and checks ``X-Twilio-Signature``."""
    twilio_from: str | None = Field(default=None, pattern=r"^(\+[1-9][0-9]{6,14}|MG[0-9a-fA-F]{32})$")
    """Where the texts come from: a Twilio number in E.164, or a Messaging Service SID (``MG…``)."""
    twilio_api_url: str = "https://api.twilio.com"
    """The Messages API's base URL (Twilio's own; a test server's in tests)."""
    twilio_rate: float = Field(default=1.0, gt=0, le=100)
    """Texts sent per second, app-wide (Twilio queues what a number sends faster than it may)."""
    sms_max_segments: int = Field(default=3, ge=1, le=10)
    """The most SMS segments one answer takes, counted as carriers count them (GSM-7: 153 characters
    a segment, UCS-2 — any Korean — 67); a longer answer is shortened at a sentence or word."""
    public_url: str | None = Field(default=None, pattern=r"^https?://[^/\s]+(/[^\s]*)?$")
    """How Twilio and guests reach this server (``https://assistant.example.com``): guest pages'
    links start with it, and Twilio's signatures are checked over it."""

    def missing_sms(self) -> list[str]:
        """The settings ``TRULOOP_SMS=twilio`` needs that are not set."""
        needed = {
            "TRULOOP_TWILIO_ACCOUNT_SID": self.twilio_account_sid,
            "TRULOOP_TWILIO_AUTH_TOKEN": reveal(self.twilio_auth_token) or None,
            "TRULOOP_TWILIO_FROM": self.twilio_from,
            "TRULOOP_PUBLIC_URL": self.public_url,
        }
        return [name for name, value in needed.items() if not value]

    @property
    def public_base(self) -> str:
        """``TRULOOP_PUBLIC_URL`` without a trailing slash (empty when unset)."""
        return (self.public_url or "").rstrip("/")
