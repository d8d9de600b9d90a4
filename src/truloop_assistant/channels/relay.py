"""Direct (1:1) channels between the assistant's bot user and a user, on Sendbird or locally."""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol
from urllib.parse import quote

from ..errors import ServiceError
from ..store.direct_channels import DirectChannels
from .direct_lookup import find_direct_channel
from .platform_http import PlatformClient, PlatformTransportError, Reply
from .platform_retry import request_retried

log = logging.getLogger(__name__)

USERS_KNOWN_S = 900.0
"""How long a process takes a user it found for one (a dialog's checks, and its tool's after the yes)."""
USERS_KNOWN_MAX = 10_000

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

    async def known_channel(self, user_id: str) -> str | None:
        """The bot's direct channel with ``user_id`` if it is known without asking the channel (None:
        not known; nothing is looked up or made)."""
        ...

    async def exists(self, user_id: str) -> bool:
        """Whether the channel has a user ``user_id`` (one read at most; nothing is made)."""
        ...


async def get_or_create_direct_channel(
    client: PlatformClient, *, bot_user_id: str, user_id: str, name: str = RELAY_CHANNEL_NAME
) -> str:
    """Return the channel_url of the bot's 1:1 channel with ``user_id`` on Sendbird: the one it
    already has, whatever its ``custom_type`` (:func:`find_direct_channel`), else a new distinct one."""
    if not bot_user_id or not user_id:
        raise ValueError("bot_user_id and user_id must not be empty")
    found = await find_direct_channel(client, bot_user_id=bot_user_id, user_id=user_id)
    if found is not None:
        return found
    return await create_direct_channel(client, bot_user_id=bot_user_id, user_id=user_id, name=name)


async def create_direct_channel(
    client: PlatformClient, *, bot_user_id: str, user_id: str, name: str = RELAY_CHANNEL_NAME
) -> str:
    """Return the channel_url of the distinct group channel of the bot and ``user_id`` with the relay's
    ``custom_type``, made by this call unless Sendbird has it already."""
    body = {
        "user_ids": [bot_user_id, user_id],
        "is_distinct": True,
        # Without it Sendbird leaves unknown ids out and makes a channel with only the bot in it.
        "strict": True,
        "name": name,
        "custom_type": RELAY_CUSTOM_TYPE,
    }
    try:
        response = await request_retried(
            client, "POST", "/v3/group_channels", json=body, what="creating a direct channel"
        )
    except PlatformTransportError as exc:
        raise RelayError(f"could not reach Sendbird: {exc}") from exc
    payload = _json(response)
    if response.status_code >= 400:
        raise _refusal(response.status_code, payload, response, bot_user_id=bot_user_id, user_id=user_id)
    channel_url = payload.get("channel_url")
    if not isinstance(channel_url, str) or not channel_url:
        status = response.status_code
        raise RelayError(f"Sendbird answered HTTP {status} without a channel_url", status=status)
    return channel_url


class SendbirdRelay:
    """Direct channels on Sendbird, through a :func:`platform_client` it does not own."""

    def __init__(
        self, client: PlatformClient, known: DirectChannels, *, name: str = RELAY_CHANNEL_NAME
    ) -> None:
        self.bot_user_id = known.bot_user_id
        self.name = name
        self._client = client
        self._known = known
        """Person -> channel, shared by every process: one look-up (and at most one creation) per
        person and ``DIRECT_CHANNEL_TTL_S``, not one per message (an invitation asks twice)."""
        self._users: dict[str, float] = {}
        """User id -> until when (``time.monotonic``) it is known to exist."""

    async def direct_channel(self, user_id: str) -> str:
        """Return the URL of the bot's 1:1 channel with ``user_id``, creating it if there is none."""
        if not user_id:
            raise ValueError("user_id must not be empty")
        if (known := await self._known.get(user_id)) is not None:
            return known
        channel_url = await get_or_create_direct_channel(
            self._client, bot_user_id=self.bot_user_id, user_id=user_id, name=self.name
        )
        await self._known.remember(user_id, channel_url)
        return channel_url

    async def known_channel(self, user_id: str) -> str | None:
        return await self._known.get(user_id) if user_id else None

    async def exists(self, user_id: str) -> bool:
        """``GET /v3/users/{user_id}`` ("View a user"): 200 is a user; Sendbird's 400201 (the resource
        does not exist) is none. A person with a known 1:1 channel, or found a moment ago (the checks
        before a dialog run again when the tool runs), exists without asking."""
        now = time.monotonic()
        if self._users.get(user_id, 0.0) > now or await self.known_channel(user_id) is not None:
            return True
        path = f"/v3/users/{quote(user_id, safe='')}"
        try:
            response = await request_retried(self._client, "GET", path, what="looking a user up")
        except PlatformTransportError as exc:
            raise RelayError(f"could not reach Sendbird: {exc}") from exc
        if response.status_code < 300:
            if len(self._users) >= USERS_KNOWN_MAX:
                self._users = {u: until for u, until in self._users.items() if until > now}
            self._users[user_id] = now + USERS_KNOWN_S
            return True
        payload = _json(response)
        if payload.get("code") == USER_NOT_FOUND or response.status_code == 404:
            return False
        said = str(payload.get("message") or response.text[:200] or response.reason)
        raise RelayError(
            f"Sendbird did not say whether user {user_id!r} exists (HTTP {response.status_code}: {said})",
            status=response.status_code,
            code=payload.get("code") if isinstance(payload.get("code"), int) else None,
        )


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

    async def known_channel(self, user_id: str) -> str | None:
        return local_direct_channel_url(self.bot_user_id, user_id) if user_id else None

    async def exists(self, user_id: str) -> bool:
        """Anyone may write on the local channel: every id is a user."""
        return bool(user_id)


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
