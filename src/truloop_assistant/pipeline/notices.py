"""Short notes to a user from the server itself (not the model): why a message was not answered.

Anyone who can write in a channel can make the server write back, so notes are metered: a person gets
at most ``NOTICES_PER_WINDOW`` per ``NOTICE_WINDOW_S`` in all their channels, a ``once`` note at most
once per its window wherever they write, and each goes out only from budget the channel has to spare
(``channels.pacing.spare_only``): when answers need it, a note is skipped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from ..channels.base import Channel, ChannelSendError, InboundMessage
from ..channels.pacing import spare_only
from ..i18n import language_of, texts
from ..store import keys

log = logging.getLogger(__name__)

_TEXTS = {
    "rate_limited": texts.SENDING_TOO_FAST,
    "too_long": texts.MESSAGE_TOO_LONG,
}


class Notices:
    def __init__(self, redis: Redis, channel: Channel) -> None:
        self.redis = redis
        self.channel = channel
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, message: InboundMessage, kind: str, *, once: bool = False, **values: Any) -> None:
        """Tell the user in their channel, in the background (the webhook answers at once).

        With ``once``, a user is told at most once per window (``window_s``), in whichever channel.
        """
        if not await self._allowed(
            message.user_id, kind, once_s=int(values.get("window_s", 60)) if once else 0
        ):
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
            if not await check() or not await self._allowed(message.user_id, kind):
                return
        except Exception:
            log.exception(
                "could not tell whether to tell %s in %s about %s", message.user_id, message.channel_url, kind
            )
            return
        await self._deliver(message, _TEXTS[kind](language_of(message.text)), kind)

    async def _allowed(self, user_id: str, kind: str, *, once_s: int = 0) -> bool:
        """Whether the person may be told now (their budget of notes, and ``once_s``'s window), counting
        the note when so: one round trip."""
        counter = keys.notices_sent(user_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            if once_s:
                pipe.set(keys.notice_once(user_id, kind), b"1", nx=True, ex=once_s)
            pipe.set(counter, 0, nx=True, ex=keys.NOTICE_WINDOW_S)  # the window, from the first note
            pipe.incr(counter)
            *first, _, sent = await pipe.execute()
        if once_s and not first[0]:
            return False
        if sent > keys.NOTICES_PER_WINDOW:
            log.info("not telling %s about %s: %d notes lately already", user_id, kind, sent - 1)
            return False
        return True

    async def _deliver(self, message: InboundMessage, text: str, kind: str) -> None:
        try:
            with spare_only():  # never at the cost of anyone's answer
                await self.channel.send_text(
                    message.channel_url, text, dedup_id=f"notice:{kind}:{message.message_id}"
                )
        except ChannelSendError as exc:
            if exc.retryable:
                log.warning(
                    "could not tell %s in %s about %s: %s", message.user_id, message.channel_url, kind, exc
                )
            else:
                log.info(
                    "did not tell %s in %s about %s: %s", message.user_id, message.channel_url, kind, exc
                )
        except Exception:
            log.exception("could not tell %s in %s about %s", message.user_id, message.channel_url, kind)

    async def drain(self) -> None:
        """Wait for notices still being sent (at shutdown)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
