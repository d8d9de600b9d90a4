"""Writes a turn's steps queue on their pipelines: what a step sends and consumes, and the indexes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from redis.asyncio.client import Pipeline

from . import keys
from .inbox import Consumed
from .outbox import Peeked, RpcOut, StreamOut, TextOut
from .reads import Write


def end_step(
    pipe: Pipeline,
    tag: str,
    outbox: Sequence[TextOut | StreamOut | RpcOut],
    consumed: Consumed | None,
    recorded: Write | None = None,
) -> None:
    """In the step's transaction: write its ledger record (``recorded``), queue what it sends, and
    take the events it ran off the inbox (its first and the messages gathered behind it; and, last,
    read the outbox's oldest message for the drain: see :func:`ended_step`). The record commits with
    the step, so a step run again after a crash finds it as it left it, and the ledger never tells of
    a step that did not happen."""
    if recorded is not None:
        recorded(pipe)
    if outbox:
        # Not trimmed here: an outbox only grows while its deliveries fail, and each failure trims it.
        pipe.rpush(keys.outbox(tag), *(item.model_dump_json() for item in outbox))
        pipe.expire(keys.outbox(tag), keys.INBOX_TTL_S)
    if consumed is not None:
        for raw, eid in consumed.events:
            pipe.lrem(keys.inbox(tag), 1, raw.decode())
            pipe.hdel(keys.inbox_attempts(tag), eid)
        pipe.lindex(keys.outbox(tag), 0)


def ended_step(replies: list[Any], consumed: Consumed | None) -> None:
    """After the step's transaction: hand the drain the outbox's oldest message it read."""
    if consumed is not None:
        consumed.outbox = Peeked(replies[-1])


def remember_channel(pipe: Pipeline, user_id: str, channel_url: str) -> None:
    """Note where the person talked with the assistant (their data there is erased on request)."""
    for write in channel_writes(user_id, channel_url):
        write(pipe)


def channel_writes(user_id: str, channel_url: str) -> list[Write]:
    """:func:`remember_channel` as writes to send with others (one command each)."""
    index = keys.user_channels(user_id)
    return [
        lambda pipe: pipe.sadd(index, channel_url),
        lambda pipe: pipe.expire(index, keys.USER_CHANNELS_TTL_S),
    ]


def list_calls(pipe: Pipeline, user_id: str, tag: str, call_ids: list[str], now: float, ttl: int) -> None:
    """Add a person's new pending calls to their list of open calls, which keeps the newest
    ``USER_CALLS_MAX`` (its reader drops the ones that left the pending state)."""
    if not call_ids:
        return
    index = keys.user_calls(user_id)
    pipe.zadd(index, {f"{tag} {call_id}": now for call_id in call_ids})
    pipe.zremrangebyrank(index, 0, -keys.USER_CALLS_MAX - 1)
    pipe.expire(index, ttl + keys.EXPIRY_GRACE_S)


def deadline_member(channel_url: str, turn_id: str) -> str:
    """A paused turn's member in the app-wide sorted set of deadlines."""
    return json.dumps([channel_url, turn_id])
