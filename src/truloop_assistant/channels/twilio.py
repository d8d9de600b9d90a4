"""Text messages to guests without the app, through Twilio's Messages API (``sms:+E164`` conversations).

An answer goes as one SMS of at most ``TRULOOP_SMS_MAX_SEGMENTS`` segments (cut at a sentence to
fit), paced app-wide (:mod:`.sms_pace`), retried on 429, 5xx and no answer, and sent once per dedup id:
Twilio has no idempotency key, so a mark in Redis (:class:`..store.sms_numbers.SmsNumbers`) stands in.
A number that texted STOP is never sent to. SMS has no devices, no streaming, no updates, no typing.
"""

from __future__ import annotations

import asyncio
import logging
import random
from contextlib import AsyncExitStack

import httpx
from redis.asyncio import Redis

from ..config import Settings, reveal
from ..protocol.addresses import sms_number
from ..store.sms_numbers import SmsNumbers
from .base import Capabilities, ChannelSendError, NoDevice
from .sms_pace import PaceTooFar, SmsPace
from .sms_segments import MULTIPART, fit

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
UNSUBSCRIBED = 21610
"""Twilio's "Attempt to send to unsubscribed recipient": the number texted STOP."""
MAX_RETRY_AFTER_S = 30.0
"""The longest ``Retry-After`` waited for within one send; a longer one ends it (retryable)."""
STATUS_PATH = "/api/v1/webhooks/twilio/status"
"""Where Twilio reports each message's delivery (``StatusCallback``)."""


class TwilioChannel(NoDevice):
    """Sends through an :class:`httpx.AsyncClient` it does not own (``open_sms`` closes it)."""

    CARRIES = "a conversation by SMS"

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        account_sid: str,
        sender: str,
        numbers: SmsNumbers,
        pace: SmsPace,
        max_segments: int,
        status_callback: str | None,
        max_attempts: int = 5,
        backoff_base_s: float = 0.2,
        backoff_cap_s: float = 5.0,
    ) -> None:
        self._client = client
        self.account_sid = account_sid
        self.sender = sender
        self.numbers = numbers
        self.pace = pace
        self.max_segments = max_segments
        self.status_callback = status_callback
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s

    def capabilities(self, channel_url: str) -> Capabilities:
        """Plain text only, within the segments an answer may take (counted as UCS-2: Korean); no
        files (MMS is not read)."""
        return Capabilities(
            devices=False,
            streams=False,
            updates=False,
            typing=False,
            max_chars=self.max_segments * MULTIPART["UCS-2"],
            max_segments=self.max_segments,
        )

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Text ``text`` (cut to fit its segments) to the conversation's number, once per ``dedup_id``."""
        number = sms_number(channel_url)
        if number is None:
            raise ChannelSendError(f"{channel_url} is not a text-message conversation", retryable=False)
        claim = await self.numbers.claim(number, dedup_id)
        if claim == "opted_out":
            raise ChannelSendError(
                f"not sent to {channel_url}: the person opted out (texted STOP)",
                retryable=False,
                code=UNSUBSCRIBED,
            )
        if claim == "sent":
            raise ChannelSendError(
                f"dedup_id={dedup_id} was sent to {channel_url} before",
                retryable=False,
                already_delivered=True,
            )
        if claim == "sending":
            raise ChannelSendError(f"dedup_id={dedup_id} is being sent to {channel_url}", retryable=True)
        try:
            sid = await self._post(number, fit(text, self.max_segments), what=f"dedup_id={dedup_id}")
        except BaseException as exc:
            await self.numbers.release(number, dedup_id)
            if isinstance(exc, ChannelSendError) and exc.code == UNSUBSCRIBED:
                await self.numbers.opt_out(number)  # Twilio knows of a STOP this server did not see
            raise
        await self.numbers.mark_sent(number, dedup_id, sid)

    async def _post(self, number: str, body: str, *, what: str) -> str:
        """Create the Message; its SID. Retried on 429 (the wait asked for), 5xx and no answer."""
        form = {"To": number, "Body": body}
        form["MessagingServiceSid" if self.sender.startswith("MG") else "From"] = self.sender
        if self.status_callback:
            form["StatusCallback"] = self.status_callback
        path = f"/2010-04-01/Accounts/{self.account_sid}/Messages.json"
        last_error, last_status, last_code = "", None, None
        for attempt in range(1, self.max_attempts + 1):
            try:
                await self.pace.slot()
            except PaceTooFar as exc:
                raise ChannelSendError(f"not sent yet: {exc}", retryable=True) from exc
            try:
                response = await self._client.post(path, data=form)
            except httpx.TransportError as exc:
                last_error, last_status, last_code = f"{type(exc).__name__}: {exc}", None, None
                delay = self._backoff(attempt)
            else:
                if response.status_code < 300:
                    return _sid_of(response)
                code, said = _error_of(response)
                refusal = f"HTTP {response.status_code}" + (f", code {code}" if code else "")
                if response.status_code not in RETRY_STATUS:
                    log.error("twilio refused the message to %s (%s): %s (%s)", number, refusal, said, what)
                    raise ChannelSendError(
                        f"Twilio refused the message ({refusal}): {said}",
                        retryable=False,
                        status=response.status_code,
                        code=code,
                    )
                last_error, last_status, last_code = f"{refusal}: {said}", response.status_code, code
                asked = _retry_after(response)
                if asked is not None and asked > MAX_RETRY_AFTER_S:
                    break
                if asked is not None and response.status_code == 429:
                    await self.pace.hold(asked)  # every process waits, not only this send
                delay = asked if asked is not None else self._backoff(attempt)
            if attempt < self.max_attempts:
                log.warning(
                    "twilio send to %s failed (%s); retry %d in %.2fs", number, last_error, attempt, delay
                )
                await asyncio.sleep(delay)
        log.warning("twilio send to %s failed for now: %s (%s)", number, last_error, what)
        raise ChannelSendError(
            f"could not text {number}: {last_error}", retryable=True, status=last_status, code=last_code
        )

    def _backoff(self, attempt: int) -> float:
        # Capped exponential backoff with full jitter.
        return random.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))


def _sid_of(response: httpx.Response) -> str:
    try:
        sid = response.json().get("sid")
    except (ValueError, AttributeError):
        sid = None
    return sid if isinstance(sid, str) else ""


def _error_of(response: httpx.Response) -> tuple[int | None, str]:
    """Twilio's error code and text (``{"code": 21211, "message": "...", "more_info": ..., "status":
    400}``), or the start of whatever else the answer says."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return None, response.text[:300] or response.reason_phrase
    code, said = body.get("code"), body.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        said[:300] if isinstance(said, str) else response.text[:300],
    )


def _retry_after(response: httpx.Response) -> float | None:
    """The seconds a ``Retry-After`` header asks for (Twilio gives whole seconds), if it is one."""
    raw = response.headers.get("retry-after", "").strip()
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def open_sms(settings: Settings, redis: Redis, stack: AsyncExitStack) -> TwilioChannel | None:
    """The SMS channel of ``TRULOOP_SMS=twilio`` (its HTTP client closed with ``stack``); None when off."""
    if settings.sms != "twilio":
        return None
    assert settings.twilio_account_sid and settings.twilio_from  # checked by Settings
    client = httpx.AsyncClient(
        base_url=settings.twilio_api_url.rstrip("/"),
        auth=(settings.twilio_account_sid, reveal(settings.twilio_auth_token)),
        timeout=httpx.Timeout(10.0, connect=5.0),
    )
    stack.push_async_callback(client.aclose)
    base = settings.public_base
    return TwilioChannel(
        client,
        account_sid=settings.twilio_account_sid,
        sender=settings.twilio_from,
        numbers=SmsNumbers(redis),
        pace=SmsPace(redis, rate=settings.twilio_rate),
        max_segments=settings.sms_max_segments,
        status_callback=base + STATUS_PATH if base else None,
    )
