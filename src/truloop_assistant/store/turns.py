"""Paused runs in Redis: their pending calls, the answers that come in, and how a turn ends."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster

from ..i18n import language_of
from ..tracing import current_traceparent
from . import keys
from . import turn_scripts as scripts
from .answers import dump_answer
from .call_answers import CallAnswers
from .call_views import decode_fields
from .history import History, marked
from .inbox import Consumed
from .outbox import RpcOut, StreamOut, TextOut
from .paused_record import decode_record, encode_record
from .reads import Read, Write
from .records import PausedTurn, TurnSnapshot
from .transcript import ASSISTANT, Line, add_line
from .turn_writes import deadline_member, end_step, ended_step, list_calls, remember_channel

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage  # pydantic-ai is the worker's: not on serve's import path

__all__ = ["TurnStore", "decode_record", "encode_record"]


class TurnStore(CallAnswers):
    """Paused turns; their calls and answers (:class:`.CallAnswers`); devices' failures per tool
    (:class:`.ClientFailureCounts`)."""

    def __init__(self, redis: Redis, *, pending_ttl_s: int, history: History) -> None:
        super().__init__(redis)
        self.pending_ttl_s = pending_ttl_s
        self.history = history
        self._cut = redis.register_script(scripts.CUT)
        self._cluster = isinstance(redis, RedisCluster)
        """A Redis Cluster: a transaction holds one hash slot's keys only."""

    # -- paused turns ----------------------------------------------------------------------------

    async def save_paused(
        self,
        turn: PausedTurn,
        *,
        outbox: Sequence[TextOut | StreamOut | RpcOut] = (),
        consumed: Consumed | None = None,
        recorded: Write | None = None,
    ) -> None:
        """Store a paused run and its pending calls; with the requests to send, the event it ends and
        its ledger record (``recorded``)."""
        tag = keys.conversation_tag(turn.channel_url)
        turn_key = keys.turn(tag, turn.turn_id)
        ttl = self.pending_ttl_s
        now = time.time()
        deadline = now + ttl
        trace = current_traceparent()  # the step's (it runs in its span): the resume continues it
        asked = {
            item.request.id: {
                "params": item.request.params,
                "message": item.notification,
                **({"channel_url": item.channel_url} if item.channel_url else {}),
            }
            for item in outbox
            if isinstance(item, RpcOut)
        }
        lang = language_of(turn.prompt)

        def indexes(index: Pipeline) -> None:
            index.zadd(keys.deadlines(), {deadline_member(turn.channel_url, turn.turn_id): deadline})
            for call in turn.sent_calls:
                index.set(keys.call_index(call.call_id), tag, ex=ttl + keys.SETTLED_TTL_S)
            remember_channel(index, turn.user_id, turn.channel_url)
            list_calls(index, turn.user_id, tag, [c.call_id for c in turn.sent_calls], now, ttl)

        # The app-wide indexes live in other hash slots. On one Redis they go in the step's own
        # transaction; a Cluster takes them first, apart: a step that dies before its transaction
        # leaves only entries that lead nowhere (an unknown call, a deadline of no turn).
        if self._cluster:
            async with self.redis.pipeline(transaction=False) as index:
                indexes(index)
                await index.execute()
        async with self.redis.pipeline(transaction=True) as pipe:
            if not self._cluster:
                indexes(pipe)
            if turn.step:  # a later step's pause: the earlier one's record and answers go
                pipe.delete(turn_key)
            remaining = len(turn.sent_calls)
            pipe.hset(
                turn_key,
                mapping={
                    "record": encode_record(turn),
                    "state": "paused" if remaining else "resuming",
                    "remaining": remaining,
                    **{f"r:{call_id}": dump_answer(answer) for call_id, answer in turn.local_answers.items()},
                    **({"trace": trace, "user_id": turn.user_id} if trace else {}),
                },
            )
            pipe.expire(turn_key, ttl + keys.SETTLED_TTL_S)
            pipe.set(keys.active_turn(tag, turn.user_id), turn.turn_id, ex=ttl + keys.SETTLED_TTL_S)
            for call in turn.sent_calls:
                pipe.hset(
                    keys.pending(tag, call.call_id),
                    mapping={
                        "user_id": turn.user_id,
                        "turn_id": turn.turn_id,
                        "channel_url": turn.channel_url,
                        "tool_name": call.tool_name,
                        "method": call.method,
                        "bucket": call.bucket,
                        "created_at": now,
                        "expires_at": deadline,
                        "lang": lang,
                        **({"schema": call.result_schema} if call.result_schema else {}),
                    },
                )
                pipe.expire(keys.pending(tag, call.call_id), ttl + keys.EXPIRY_GRACE_S)
                pipe.set(
                    keys.call_request(tag, call.call_id),
                    json.dumps(asked.get(call.call_id, {}), ensure_ascii=False, separators=(",", ":")),
                    ex=ttl + keys.SETTLED_TTL_S,
                )
            end_step(pipe, tag, outbox, consumed, recorded)
            ended_step(await pipe.execute(), consumed)

    async def load_turn(self, channel_url: str, turn_id: str) -> TurnSnapshot | None:
        return await self.turn_read(channel_url, turn_id).once(self.redis)

    def turn_read(self, channel_url: str, turn_id: str) -> Read[TurnSnapshot | None]:
        """:meth:`load_turn` as a read to batch with others."""
        key = keys.turn(keys.conversation_tag(channel_url), turn_id)
        return Read(lambda r: r.hgetall(key), _snapshot)

    async def trace_of(self, channel_url: str, turn_id: str) -> tuple[str | None, str | None]:
        """The traceparent a paused turn was saved with (when tracing was on), and its user id."""
        key = keys.turn(keys.conversation_tag(channel_url), turn_id)
        trace, user_id = cast(list[bytes | None], await self.redis.hmget(key, ["trace", "user_id"]))
        return (trace.decode() if trace else None), (user_id.decode() if user_id else None)

    async def active_turn(self, channel_url: str, user_id: str) -> str | None:
        """The id of a person's paused (or resuming) turn in the channel, if any."""
        return await self.active_read(channel_url, user_id).once(self.redis)

    def active_read(self, channel_url: str, user_id: str) -> Read[str | None]:
        """:meth:`active_turn` as a read to batch with others."""
        key = keys.active_turn(keys.conversation_tag(channel_url), user_id)
        return Read(lambda r: r.get(key), lambda raw: raw.decode() if raw else None)

    async def supersede(self, turn: PausedTurn) -> bool:
        """End a paused turn's unanswered calls as superseded; False if it was no longer paused."""
        return await self._cut_short(turn, "superseded")

    async def expire(self, turn: PausedTurn) -> bool:
        """End a paused turn's unanswered calls as expired and mark it for resuming; False if not paused."""
        return await self._cut_short(turn, "expired")

    async def _cut_short(self, turn: PausedTurn, how: str) -> bool:
        tag = keys.conversation_tag(turn.channel_url)
        call_keys = [
            k for c in turn.calls for k in (keys.pending(tag, c.call_id), keys.settled(tag, c.call_id))
        ]
        before = await self._cut(
            keys=[
                keys.turn(tag, turn.turn_id),
                keys.active_turn(tag, turn.user_id),
                keys.outbox(tag),
                *call_keys,
            ],
            args=[
                keys.SETTLED_TTL_S,
                turn.turn_id,
                turn.user_id,
                turn.channel_url,
                keys.SUPERSEDED_TURN_TTL_S,
                how,
                keys.OUTBOX_MAX,
                keys.INBOX_TTL_S,
                *(c.call_id for c in turn.calls),
            ],
        )
        return bool(before == b"paused")

    async def forget_turns(self, channel_url: str, turn_ids: Sequence[str]) -> None:
        """Forget what these turns did (their paused runs, answers and recorded effects), keeping only
        each one's state: a late answer or a re-delivered job still sees how it ended."""
        if not turn_ids:
            return
        tag = keys.conversation_tag(channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            for turn_id in turn_ids:
                pipe.eval(scripts.KEEP_STATE_ONLY, 1, keys.turn(tag, turn_id), keys.DONE_TURN_TTL_S)
                pipe.delete(keys.effects(tag, turn_id))
            await pipe.execute()

    async def due(self, now: float, *, limit: int = 100) -> list[tuple[str, str]]:
        """Paused turns whose calls expired by ``now``: (channel_url, turn_id)."""
        members = cast(
            list[bytes], await self.redis.zrangebyscore(keys.deadlines(), "-inf", now, start=0, num=limit)
        )
        return [(channel_url, turn_id) for channel_url, turn_id in (json.loads(m) for m in members)]

    async def forget_deadline(self, channel_url: str, turn_id: str) -> None:
        await self.redis.zrem(keys.deadlines(), deadline_member(channel_url, turn_id))

    async def finish(
        self,
        channel_url: str,
        user_id: str,
        messages: list[ModelMessage],
        *,
        turn_id: str,
        paused: bool,
        answer: str | None = None,
        outbox: Sequence[TextOut | StreamOut | RpcOut] = (),
        consumed: Consumed | None = None,
        recorded: Write | None = None,
    ) -> None:
        """Save the person's history and end the turn: the answer, what to send, the event it ends and
        its ledger record (``recorded``).

        A turn that had paused keeps only its state afterwards (its history is the person's history
        now); its call ids stay settled for the device's late answers.
        """
        tag = keys.conversation_tag(channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            # A message's turn marks its prompt with the message id: an edit or deletion finds it.
            kept = marked(messages, turn_id[1:]) if turn_id.startswith("m") else messages
            pipe.set(keys.history(tag, user_id), self.history.encode(kept), ex=keys.HISTORY_TTL_S)
            if answer is not None:
                add_line(pipe, tag, Line(user_id=ASSISTANT, text=answer, to=user_id))
            pipe.delete(keys.effects(tag, turn_id))
            if paused:
                pipe.delete(keys.turn(tag, turn_id))
                pipe.hset(keys.turn(tag, turn_id), "state", "done")
                pipe.expire(keys.turn(tag, turn_id), keys.DONE_TURN_TTL_S)
            if not self._cluster:  # on one Redis, the app-wide indexes too (see below)
                self._index_finished(pipe, tag, channel_url, user_id, turn_id, paused=paused)
            end_step(pipe, tag, outbox, consumed, recorded)
            ended_step(await pipe.execute(), consumed)
        # A Cluster keeps the app-wide indexes in other hash slots: they go after the transaction. A
        # deadline left behind by a crash here is dropped by the expiry scanner, which finds the turn done.
        if self._cluster:
            async with self.redis.pipeline(transaction=False) as index:
                self._index_finished(index, tag, channel_url, user_id, turn_id, paused=paused)
                await index.execute()

    @staticmethod
    def _index_finished(
        pipe: Pipeline, tag: str, channel_url: str, user_id: str, turn_id: str, *, paused: bool
    ) -> None:
        if paused:  # its pause noted the channel already
            pipe.zrem(keys.deadlines(), deadline_member(channel_url, turn_id))
            # Only clear the marker if it still names this turn (a later turn may have paused since).
            pipe.eval(scripts.DELETE_IF_EQUAL, 1, keys.active_turn(tag, user_id), turn_id)
        else:
            remember_channel(pipe, user_id, channel_url)


def _snapshot(raw: dict[bytes, bytes]) -> TurnSnapshot | None:
    """A turn's hash as read: its record, state and answers; None for no (or only a done) turn."""
    if not raw or b"record" not in raw:
        return None
    record = decode_record(raw.pop(b"record"))
    fields = decode_fields(raw)
    return TurnSnapshot.model_validate(
        {
            "state": fields["state"],
            "turn": record,
            "answers": {k[2:]: json.loads(v) for k, v in fields.items() if k.startswith("r:")},
        }
    )
