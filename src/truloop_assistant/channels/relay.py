"""Direct (1:1) channels between the assistant's bot user and a user, on Sendbird or locally."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any, Protocol

from ..errors import ServiceError
from .platform_http import PlatformClient, PlatformTransportError, Reply, retry_after

log = logging.getLogger(__name__)

RELAY_CUSTOM_TYPE = "assistant-relay"
RELAY_CHANNEL_NAME = "Truloop"

USER_NOT_FOUND = 400201
"""Sendbird's code for a ``strict`` creation naming a user id it does not know."""
JOIN_LIMIT_TEXT = '"channel join" count'
"""In Sendbird's message when a member has joined as many group channels as allowed (2,000 by
default): ``Maximum "channel join" count reached.``. Its code is not documented, so the text decides."""


class RelayError(ServiceError):
    """Sendbird did not give a direct channel; the message carries Sendbird's reason."""

    def __init__(self, message: str, *, status: int | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class NoSuchUser(RelayError):
    """Sendbird has no user with that id: no channel was made."""


class ChannelJoinLimit(RelayError):
    """The bot (or the person) has joined as many group channels as Sendbird allows."""


class Relay(Protocol):
    async def direct_channel(self, user_id: str) -> str:
        """Return the URL of the bot's direct channel with ``user_id``, creating it if needed."""
        ...


async def get_or_create_direct_channel(
    client: PlatformClient, *, bot_user_id: str, user_id: str, name: str = RELAY_CHANNEL_NAME
) -> str:
    """Return the channel_url of the distinct group channel of the bot and ``user_id`` (Sendbird)."""
    if not bot_user_id or not user_id:
        raise ValueError("bot_user_id and user_id must not be empty")
    body = {
        "user_ids": [bot_user_id, user_id],
        "is_distinct": True,
        # Without it Sendbird leaves unknown ids out and makes a channel with only the bot in it.
        "strict": True,
        "name": name,
        "custom_type": RELAY_CUSTOM_TYPE,
    }
    response = await _create(client, body)
    payload = _json(response)
    if response.status_code >= 400:
        raise _refusal(response.status_code, payload, response, bot_user_id=bot_user_id, user_id=user_id)
    channel_url = payload.get("channel_url")
    if not isinstance(channel_url, str) or not channel_url:
        status = response.status_code
        raise RelayError(f"Sendbird answered HTTP {status} without a channel_url", status=status)
    return channel_url


KNOWN_FOR_S = 60.0
"""How long a process reuses a direct channel's URL before it asks Sendbird again."""
KNOWN_MAX = 10_000
"""Direct channels a process remembers at most."""
CREATE_ATTEMPTS = 5
"""Tries of a channel creation that meets a 429, a 5xx or no answer (each after the wait asked for)."""
_RETRY_STATUS = {429, 500, 502, 503, 504}


async def _create(client: PlatformClient, body: dict[str, Any]) -> Reply:
    """``POST /v3/group_channels`` in its slot of the app-wide budget, tried again after a 429 (the
    wait it asks for), a 5xx or no answer; the last answer, or :class:`RelayError` if there was none."""
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            response = await client.request("POST", "/v3/group_channels", json=body)
        except PlatformTransportError as exc:
            if attempt == CREATE_ATTEMPTS:
                raise RelayError(f"could not reach Sendbird: {exc}") from exc
            delay = _backoff(attempt)
        else:
            if response.status_code not in _RETRY_STATUS or attempt == CREATE_ATTEMPTS:
                return response
            delay = retry_after(response) or _backoff(attempt)
        log.warning("creating a direct channel failed (attempt %d); retry in %.2fs", attempt, delay)
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")


def _backoff(attempt: int) -> float:
    return random.uniform(0, min(2.0, 0.1 * 2**attempt))


class SendbirdRelay:
    """Direct channels on Sendbird, through a :func:`platform_client` it does not own."""

    def __init__(self, client: PlatformClient, *, bot_user_id: str, name: str = RELAY_CHANNEL_NAME) -> None:
        self.bot_user_id = bot_user_id
        self.name = name
        self._client = client
        self._known: dict[str, tuple[str, float]] = {}
        """user id -> (channel URL, until when it is reused): one creation call per person and
        ``KNOWN_FOR_S``, not one per look-up and per message (an invitation makes both)."""

    async def direct_channel(self, user_id: str) -> str:
        """Return the URL of the bot's distinct channel with ``user_id``, creating it if needed."""
        now = time.monotonic()
        if (known := self._known.get(user_id)) is not None and known[1] > now:
            return known[0]
        channel_url = await get_or_create_direct_channel(
            self._client, bot_user_id=self.bot_user_id, user_id=user_id, name=self.name
        )
        if len(self._known) >= KNOWN_MAX:
            self._known = {u: k for u, k in self._known.items() if k[1] > now}
            if len(self._known) >= KNOWN_MAX:
                self._known.clear()
        self._known[user_id] = (channel_url, now + KNOWN_FOR_S)
        return channel_url


def local_direct_channel_url(bot_user_id: str, user_id: str) -> str:
    """The deterministic URL of a local (dev) direct channel: ``relay-<bot>-<user>``."""
    if not bot_user_id or not user_id:
        raise ValueError("bot_user_id and user_id must not be empty")
    return f"relay-{bot_user_id}-{user_id}"


class LocalRelay:
    """Direct channels for the dev server's local channel: no network, the URL is derived from the ids."""

    def __init__(self, *, bot_user_id: str) -> None:
        self.bot_user_id = bot_user_id

    async def direct_channel(self, user_id: str) -> str:
        """Return ``relay-<bot>-<user>``; local channels exist as soon as a message is written."""
        return local_direct_channel_url(self.bot_user_id, user_id)


def _refusal(
    status: int, payload: dict[str, Any], response: Reply, *, bot_user_id: str, user_id: str
) -> RelayError:
    """The error for Sendbird's refusal of the channel, saying what it means where that is known."""
    raw_code = payload.get("code")
    code = raw_code if isinstance(raw_code, int) else None
    message = str(payload.get("message") or response.text[:200] or response.reason)
    said = f"HTTP {status}{f', code {code}' if code else ''}: {message}"
    if code == USER_NOT_FOUND and status < 500:
        return NoSuchUser(
            f"no such user: Sendbird has no user {user_id!r}, so no chat with them was made "
            f"(check the user id; Sendbird said {said})",
            status=status,
            code=code,
        )
    if JOIN_LIMIT_TEXT in message:
        log.error(
            "Sendbird refused a direct channel with %r: %s. The bot user %r (or that person) is in as many "
            "group channels as Sendbird allows; ask Sendbird to raise the limit or delete unused channels",
            user_id,
            message,
            bot_user_id,
        )
        return ChannelJoinLimit(
            f"the assistant's bot user {bot_user_id!r} has reached Sendbird's limit of group channels it "
            f"may join ({message.strip()}), so no chat with {user_id!r} could be made: the operator must "
            "ask Sendbird to raise it or delete channels no longer used",
            status=status,
            code=code,
        )
    return RelayError(
        f"Sendbird refused the direct channel for {user_id!r} ({said})", status=status, code=code
    )


def _json(response: Reply) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}
