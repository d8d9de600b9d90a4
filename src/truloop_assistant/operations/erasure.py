"""Erasing a person's data on their request: memories, their history with the assistant, pending calls,
the device tools their app declared.

Kept: events other people organize (the person stays on their invitee lists until the organizer
changes them), and the ids of settled calls (no content, gone after 24 h) so late answers still get
their 410.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from ..backends.memory import MemoryStore
from ..pipeline.intake import Intake
from ..store import keys
from ..store.transcript import Transcript
from ..store.turns import TurnStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Erased:
    memories: int
    channels: int
    calls_cut: int


async def erase_user(
    user_id: str,
    *,
    redis: Redis,
    store: TurnStore,
    transcript: Transcript,
    memory: MemoryStore,
    intake: Intake,
) -> Erased:
    """Erase what the server keeps of ``user_id``; safe to repeat."""
    memories = await memory.forget_all(user_id)
    raw = cast(set[bytes], await redis.smembers(keys.user_channels(user_id)))
    channels = sorted(c.decode() for c in raw)
    cut = 0
    for channel_url in channels:
        tag = keys.conversation_tag(channel_url)
        if (active := await store.active_turn(channel_url, user_id)) is not None:
            snapshot = await store.load_turn(channel_url, active)
            if snapshot is not None and await store.supersede(snapshot.turn):
                cut += len(snapshot.turn.sent_calls)
                await intake.deliver(channel_url)  # the requests' messages say they ended
        await redis.delete(keys.history(tag, user_id))
        await transcript.forget_user(channel_url, user_id)
    # What their requests asked (a dialog's text, say) goes too; the settled ids stay, without it.
    listed = cast(list[bytes], await redis.zrange(keys.user_calls(user_id), 0, -1))
    for tag, call_id in (m.decode().split(" ", 1) for m in listed):
        await redis.delete(keys.call_request(tag, call_id))
    await redis.delete(
        keys.user_channels(user_id),
        keys.client_tools(user_id),
        keys.user_calls(user_id),
        keys.client_failures(user_id),
    )
    log.info("erased %s: %d memories, %d channels, %d pending calls", user_id, memories, len(channels), cut)
    return Erased(memories=memories, channels=len(channels), calls_cut=cut)
