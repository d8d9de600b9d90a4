"""Why a conversation is not answered now: what waits in its outbox and why it did not go out, the
drain that owns it, and what admission decided of its recent messages (for ``inspect``).

Read in one pipeline; nothing of what people wrote is shown (kinds, ids, lengths and times only).
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import BaseModel
from redis.asyncio import Redis

from ..channels.parts import DEFAULT_MAX_CHARS, first_part
from ..store import keys
from ..store.outbox import OUTGOING, RpcOut, SettleOut, TextOut

KINDS = {"text": "answer", "rpc": "request", "settle": "update"}
"""How the outbox's kinds of message are shown."""


class Outgoing(BaseModel):
    """A message waiting in the outbox, oldest first."""

    kind: str
    """``answer``, ``request`` (to a phone) or ``update`` (of a settled request's message)."""
    dedup_id: str
    since: float
    """When the step that sent it ended (Unix seconds)."""
    part: str | None = None
    """Of a text too long for one message: which parts it still holds, ``n of m`` (the part that goes
    next) or ``n-m of m`` (what is left of it, split as it comes to the head)."""
    detail: str | None = None
    """A request's method and the phone's owner, an update's call and state."""


class Delivery(BaseModel):
    """The outbox: what waits, how many deliveries failed in a row, the last one's error, the next try."""

    waiting: list[Outgoing]
    failures: int
    last_error: dict[str, Any] | None
    """When, the message (``dedup_id``), the channel's HTTP ``status`` and ``code``, and the ``error``."""
    next_try_at: float | None
    """When the conversation is looked at again (a drain delivers then), if it is watched."""


class Drain(BaseModel):
    """The job that owns the conversation's inbox and outbox now."""

    owner: str
    worker: str | None
    """The worker running it (host:process id), as it noted when it claimed the conversation."""
    since: float | None
    """When it claimed the conversation (Unix seconds)."""
    lease_expires_in_s: float | None
    """Until its claim lapses unless its worker renews it (a dead worker's lapses: another takes over)."""
    waiting_for_device: bool
    """It keeps the conversation a moment for a phone's answer."""


class Waiting(BaseModel):
    delivery: Delivery
    drain: Drain | None
    admissions: list[dict[str, Any]]
    """What admission decided of the channel's recent messages, newest first."""


async def read_waiting(
    redis: Redis, channel_url: str, *, max_message_chars: int = DEFAULT_MAX_CHARS
) -> Waiting:
    """What waits in the conversation, and why."""
    tag = keys.conversation_tag(channel_url)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.lrange(keys.outbox(tag), 0, keys.OUTBOX_MAX - 1)
        pipe.get(keys.outbox_failures(tag))
        pipe.get(keys.outbox_error(tag))
        pipe.get(keys.owner(tag))
        pipe.pttl(keys.owner(tag))
        pipe.exists(keys.waiting(tag))
        pipe.get(keys.drain_note(tag))
        pipe.lrange(keys.admissions(tag), 0, keys.ADMISSIONS_MAX - 1)
        pipe.zscore(keys.drains(), channel_url)
        outbox, failures, error, owner, ttl_ms, device, note, decided, due = await pipe.execute()
    drain = None
    if owner is not None:
        noted_owner, since, worker = _drain_note(note)
        drain = Drain(
            owner=owner.decode(),
            worker=worker if noted_owner == owner.decode() else None,
            since=since if noted_owner == owner.decode() else None,
            lease_expires_in_s=round(ttl_ms / 1000, 1) if ttl_ms is not None and ttl_ms >= 0 else None,
            waiting_for_device=bool(device),
        )
    waiting_now = _numbered(
        [m for raw in cast(list[bytes], outbox) if (m := _outgoing(raw, max_message_chars))]
    )
    return Waiting(
        delivery=Delivery(
            waiting=waiting_now,
            failures=int(failures or 0),
            last_error=_json(error),
            next_try_at=float(due) if due is not None and waiting_now else None,
        ),
        drain=drain,
        admissions=[entry for raw in cast(list[bytes], decided) if (entry := _json(raw)) is not None],
    )


def _outgoing(raw: bytes, max_message_chars: int) -> tuple[Outgoing, tuple[int, int] | None] | None:
    """A message as shown, and for a text: the parts it holds (from, to; counted from 1)."""
    try:
        item = OUTGOING.validate_json(raw)
    except ValueError:
        return None
    shown = Outgoing(kind=KINDS[item.kind], dedup_id=item.dedup_id, since=item.created_at)
    match item:
        case TextOut(part=part):
            done = part or 0
            return shown, (done + 1, done + _parts(item.text, max_message_chars))
        case RpcOut():
            shown.detail = f"{item.request.method} for {item.recipient or '(the channel)'}"
        case SettleOut():
            shown.detail = f"{item.call_id} {item.state}"
    return shown, None


def _numbered(found: list[tuple[Outgoing, tuple[int, int] | None]]) -> list[Outgoing]:
    """The messages, a long text's parts numbered out of all its parts (those waiting behind it too)."""
    last: dict[str, int] = {}
    for shown, held in found:
        if held is not None:
            last[shown.dedup_id] = max(last.get(shown.dedup_id, 0), held[1])
    for shown, held in found:
        if held is not None and last[shown.dedup_id] > 1:
            first, to = held
            shown.part = f"{first if first == to else f'{first}-{to}'} of {last[shown.dedup_id]}"
    return [shown for shown, _ in found]


def _parts(text: str, max_chars: int) -> int:
    """How many messages ``text`` goes out as."""
    count, rest = 1, first_part(text, max_chars)[1]
    while rest:
        count, rest = count + 1, first_part(rest, max_chars)[1]
    return count


def _drain_note(raw: bytes | None) -> tuple[str | None, float | None, str | None]:
    """The owner, since when and the worker of ``keys.drain_note`` (Nones when absent or unreadable)."""
    parts = (raw or b"").decode(errors="replace").split(" ", 2)
    if len(parts) != 3:
        return None, None, None
    try:
        return parts[0], float(parts[1]), parts[2]
    except ValueError:
        return None, None, None


def _json(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
