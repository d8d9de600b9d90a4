"""The calls of paused turns as the devices see them: looking one up, and the answers that come in.

A part of the turn store (:class:`~.turns.TurnStore` extends it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Literal, cast

from pydantic import TypeAdapter
from redis.asyncio import Redis

from . import keys
from . import turn_scripts as scripts
from .answers import DeviceError, DeviceResult, dump_answer
from .call_views import call_views
from .client_failures import ClientFailureCounts
from .reads import Read
from .records import CallView, Outcome

_OUTCOME: TypeAdapter[Outcome] = TypeAdapter(Outcome)


class CallAnswers(ClientFailureCounts):
    def __init__(self, redis: Redis) -> None:
        super().__init__(redis)
        self._record_answer = redis.register_script(scripts.RECORD_ANSWER)
        self._note_unhandled = redis.register_script(scripts.NOTE_UNHANDLED)

    async def get_call(self, call_id: str) -> CallView | None:
        return await self.call_in(await self.call_tag_read(call_id).once(self.redis), call_id)

    def call_tag_read(self, call_id: str) -> Read[str | None]:
        """The conversation (its hash tag) a call id belongs to, None for an unknown id: a read to
        send with others."""
        key = keys.call_index(call_id)
        return Read(lambda r: r.get(key), lambda raw: None if raw is None else raw.decode())

    async def call_in(self, tag: str | None, call_id: str) -> CallView | None:
        """:meth:`get_call` once its conversation is known (``call_tag_read``; None: unknown)."""
        return None if tag is None else (await self._views(tag, [call_id]))[0]

    async def _views(self, tag: str, call_ids: Sequence[str]) -> list[CallView | None]:
        """What is known of each call of one conversation (None once it is forgotten)."""
        return await call_views(self.redis, tag, call_ids)

    async def open_calls(self, user_id: str, *, limit: int = keys.USER_CALLS_MAX) -> list[CallView]:
        """The person's pending calls, newest first; calls that left the list are dropped from it."""
        index = keys.user_calls(user_id)
        members = cast(list[bytes], await self.redis.zrevrange(index, 0, keys.USER_CALLS_MAX - 1))
        listed = [m.decode().split(" ", 1) for m in members]
        by_tag: dict[str, list[str]] = {}
        for tag, call_id in listed:
            by_tag.setdefault(tag, []).append(call_id)
        views: dict[str, CallView | None] = {}
        for tag, call_ids in by_tag.items():
            views.update(zip(call_ids, await self._views(tag, call_ids), strict=True))
        calls, gone = [], []
        for (_, call_id), member in zip(listed, members, strict=True):
            view = views[call_id]
            if view is not None and view.state == "pending":
                calls.append(view)
            elif view is None or view.state != "expired":  # an expired one is settled by the scanner
                gone.append(member)
        if gone:
            await self.redis.zrem(index, *gone)
        return calls[:limit]

    async def record_answer(
        self,
        call: CallView,
        fingerprint: str,
        answer: DeviceResult | DeviceError,
        *,
        state: Literal["answered", "cancelled"] = "answered",
    ) -> tuple[Outcome, int]:
        """Store a device's answer; returns the outcome and how many calls of the turn remain.

        ``cancelled``: the answer is a -32601 that no other device overruled in time.
        """
        raw_outcome, extra = await self._record_answer(
            keys=[
                keys.pending(call.tag, call.call_id),
                keys.settled(call.tag, call.call_id),
                keys.turn(call.tag, call.turn_id),
                keys.outbox(call.tag),
            ],
            args=[
                call.call_id,
                fingerprint,
                dump_answer(answer),
                keys.SETTLED_TTL_S,
                keys.OUTBOX_MAX,
                keys.INBOX_TTL_S,
                state,
            ],
        )
        outcome = _OUTCOME.validate_python(raw_outcome.decode())
        return outcome, int(extra) if outcome == "accepted" else 0

    async def note_unhandled(
        self, call: CallView, fingerprint: str, answer: DeviceError, *, wait_s: float
    ) -> tuple[Outcome, int]:
        """A device cannot run the call (-32601): keep it pending for another device for ``wait_s``.

        If no other answer comes by then, :meth:`end_unhandled` ends it with this answer.
        """
        member = json.dumps([call.tag, call.call_id])
        await self.redis.zadd(keys.unhandled(), {member: time.time() + wait_s}, nx=True)
        raw_outcome, extra = await self._note_unhandled(
            keys=[
                keys.pending(call.tag, call.call_id),
                keys.settled(call.tag, call.call_id),
                keys.turn(call.tag, call.turn_id),
            ],
            args=[fingerprint, dump_answer(answer)],
        )
        outcome = _OUTCOME.validate_python(raw_outcome.decode())
        return outcome, int(extra) if outcome == "accepted" else 0

    async def unhandled_due(self, now: float, *, limit: int = 100) -> list[tuple[str, str]]:
        """Calls whose -32601 was not overruled by ``now``: (conversation tag, call id)."""
        members = cast(
            list[bytes], await self.redis.zrangebyscore(keys.unhandled(), "-inf", now, start=0, num=limit)
        )
        return [(tag, call_id) for tag, call_id in (json.loads(m) for m in members)]

    async def end_unhandled(self, tag: str, call_id: str) -> tuple[Outcome, CallView | None]:
        """End a call with the -32601 a device gave, unless another answer came meanwhile."""
        view = (await self._views(tag, [call_id]))[0]
        outcome: Outcome = "unknown"
        if view is not None and view.state == "pending" and view.unhandled:
            raw = cast(bytes | None, await self.redis.hget(keys.pending(tag, call_id), "nf_answer"))
            if raw is not None:
                answer = DeviceError.model_validate_json(raw)
                outcome, _ = await self.record_answer(view, view.unhandled, answer, state="cancelled")
        return outcome, view

    async def forget_unhandled(self, tag: str, call_id: str) -> None:
        await self.redis.zrem(keys.unhandled(), json.dumps([tag, call_id]))
