"""Short notes to a user from the server itself (not the model): why a message was not answered."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from ..channels.base import Channel, InboundMessage
from ..i18n import language_of, texts
from ..store import keys

log = logging.getLogger(__name__)

_TEXTS = {
    "rate_limited": texts.SENDING_TOO_FAST,
    "too_long": texts.MESSAGE_TOO_LONG,
    "text_only": texts.TEXT_ONLY,
}


class Notices:
    def __init__(self, redis: Redis, channel: Channel) -> None:
        self.redis = redis
        self.channel = channel
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, message: InboundMessage, kind: str, *, once: bool = False, **values: Any) -> None:
        """Tell the user in their channel, in the background (the webhook answers at once).

        With ``once``, a user is told at most once per window (``window_s``).
        """
        if once:
            key = keys.rate_limit_notice(keys.conversation_tag(message.channel_url), message.user_id)
            if not await self.redis.set(key, b"1", nx=True, ex=int(values.get("window_s", 60))):
                return
        text = _TEXTS[kind](language_of(message.text), **values)
        task = asyncio.create_task(self._deliver(message, text, kind))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def send_if(self, message: InboundMessage, kind: str, check: Callable[[], Awaitable[bool]]) -> None:
        """Tell the user, in the background, when ``check`` (asked there too) says so."""
        task = asyncio.create_task(self._deliver_if(message, kind, check))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver_if(
        self, message: InboundMessage, kind: str, check: Callable[[], Awaitable[bool]]
    ) -> None:
        try:
            if not await check():
                return
        except Exception:
            log.exception(
                "could not tell whether to tell %s in %s about %s", message.user_id, message.channel_url, kind
            )
            return
        await self._deliver(message, _TEXTS[kind](language_of(message.text)), kind)

    async def _deliver(self, message: InboundMessage, text: str, kind: str) -> None:
        try:
            await self.channel.send_text(
                message.channel_url, text, dedup_id=f"notice:{kind}:{message.message_id}"
            )
        except Exception:
            log.exception("could not tell %s in %s about %s", message.user_id, message.channel_url, kind)

    async def drain(self) -> None:
        """Wait for notices still being sent (at shutdown)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
