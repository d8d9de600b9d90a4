"""Paused runs in Redis: their pending calls, the answers that come in, and how a turn ends."""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Sequence
from typing import cast

from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from ..tracing import current_traceparent
from . import keys
from .answers import DeviceError, DeviceResult, dump_answer
from .history import History
from .inbox import Consumed
from .outbox import RpcOut, TextOut
from .records import CallView, Outcome, PausedTurn, TurnSnapshot
from .transcript import ASSISTANT, Line, add_line

_OUTCOME: TypeAdapter[Outcome] = TypeAdapter(Outcome)


# Records one answer and, for the last one, claims the resume — atomically, so that however
# many identical answers race in, exactly one of them returns 'resume'.
_RECORD_ANSWER = """
local state = redis.call('HGET', KEYS[2], 'state')
if state then
  if state ~= 'answered' then return {'gone', state} end
  if redis.call('HGET', KEYS[2], 'fp') == ARGV[2] then return {'duplicate', ''} end
  return {'conflict', ''}
end
local user = redis.call('HGET', KEYS[1], 'user_id')
if not user then return {'unknown', ''} end
local now = redis.call('TIME')
if tonumber(redis.call('HGET', KEYS[1], 'expires_at')) < tonumber(now[1]) + tonumber(now[2]) / 1e6 then
  return {'gone', 'expired'}
end
redis.call('HSET', KEYS[3], 'r:' .. ARGV[1], ARGV[3])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], 'state', 'answered', 'fp', ARGV[2], 'user_id', user,
           'turn_id', ARGV[5], 'channel_url', ARGV[6], 'tool_name', ARGV[7], 'method', ARGV[8],
           'bucket', ARGV[9])
redis.call('EXPIRE', KEYS[2], ARGV[4])
local remaining = redis.call('HINCRBY', KEYS[3], 'remaining', -1)
if remaining <= 0 and redis.call('HGET', KEYS[3], 'state') == 'paused' then
  redis.call('HSET', KEYS[3], 'state', 'resuming')
  return {'resume', '0'}
end
return {'accepted', tostring(remaining)}
"""

_DELETE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# Cuts a paused turn short: its unanswered calls end as ARGV[6] ('superseded': the user wrote again;
# 'expired': the device did not answer in time). A superseded turn is closed; an expired one resumes.
# KEYS: turn, active marker, then (pending, settled) per call. ARGV: settled ttl, turn id, user, channel,
# done ttl, how. Returns the turn's state before: only 'paused' turns are cut.
_CUT = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'paused' then return state or '' end
for i = 3, #KEYS, 2 do
  if redis.call('DEL', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i + 1], 'state', ARGV[6], 'user_id', ARGV[3], 'turn_id', ARGV[2],
               'channel_url', ARGV[4])
    redis.call('EXPIRE', KEYS[i + 1], ARGV[1])
  end
end
if ARGV[6] == 'superseded' then
  redis.call('HSET', KEYS[1], 'state', 'superseded')
  redis.call('EXPIRE', KEYS[1], ARGV[5])  -- read once more by the run that answers the new message
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
else
  redis.call('HSET', KEYS[1], 'state', 'resuming')
end
return 'paused'
"""


class TurnStore:
    def __init__(self, redis: Redis, *, pending_ttl_s: int, history: History) -> None:
        self.redis = redis
        self.pending_ttl_s = pending_ttl_s
        self.history = history
        self._record_answer = redis.register_script(_RECORD_ANSWER)
        self._cut = redis.register_script(_CUT)

    # -- paused turns ----------------------------------------------------------------------------

    async def save_paused(
        self, turn: PausedTurn, *, outbox: Sequence[TextOut | RpcOut] = (), consumed: Consumed | None = None
    ) -> None:
        """Store a paused run and its pending calls; with the requests to send and the event it ends."""
        tag = keys.conversation_tag(turn.channel_url)
        turn_key = keys.turn(tag, turn.turn_id)
        ttl = self.pending_ttl_s
        deadline = time.time() + ttl
        trace = current_traceparent()  # the step's (it runs in its span): the resume continues it
        # The app-wide indexes first (each in its own hash slot): a step that dies before its
        # transaction leaves only entries that lead nowhere (an unknown call, a deadline of no turn).
        async with self.redis.pipeline(transaction=False) as index:
            index.zadd(keys.deadlines(), {_deadline_member(turn.channel_url, turn.turn_id): deadline})
            for call in turn.sent_calls:
                index.set(keys.call_index(call.call_id), tag, ex=ttl + keys.SETTLED_TTL_S)
            _remember_channel(index, turn.user_id, turn.channel_url)
            await index.execute()
        async with self.redis.pipeline(transaction=True) as pipe:
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
                        "expires_at": deadline,
                        **({"schema": call.result_schema} if call.result_schema else {}),
                    },
                )
                pipe.expire(keys.pending(tag, call.call_id), ttl + keys.EXPIRY_GRACE_S)
            _end_step(pipe, tag, outbox, consumed)
            await pipe.execute()

    async def get_call(self, call_id: str) -> CallView | None:
        raw_tag = cast(bytes | None, await self.redis.get(keys.call_index(call_id)))
        if raw_tag is None:
            return None
        tag = raw_tag.decode()
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.pending(tag, call_id))
            pipe.hgetall(keys.settled(tag, call_id))
            pending, settled = await pipe.execute()
        if settled:
            fields = _decode(settled)
        elif pending:
            fields = _decode(pending)
            # Past its deadline it is expired, even before the expiry scanner has settled it.
            fields["state"] = "expired" if float(fields.get("expires_at", "inf")) < time.time() else "pending"
        else:
            return None
        return CallView.model_validate({**fields, "call_id": call_id, "tag": tag})

    async def record_answer(
        self, call: CallView, fingerprint: str, answer: DeviceResult | DeviceError
    ) -> tuple[Outcome, int]:
        """Store a device's answer; returns the outcome and how many calls of the turn remain."""
        raw_outcome, extra = await self._record_answer(
            keys=[
                keys.pending(call.tag, call.call_id),
                keys.settled(call.tag, call.call_id),
                keys.turn(call.tag, call.turn_id),
            ],
            args=[
                call.call_id,
                fingerprint,
                dump_answer(answer),
                keys.SETTLED_TTL_S,
                call.turn_id,
                call.channel_url,
                call.tool_name,
                call.method,
                call.bucket,
            ],
        )
        outcome = _OUTCOME.validate_python(raw_outcome.decode())
        return outcome, int(extra) if outcome == "accepted" else 0

    async def load_turn(self, channel_url: str, turn_id: str) -> TurnSnapshot | None:
        key = keys.turn(keys.conversation_tag(channel_url), turn_id)
        raw = cast(dict[bytes, bytes], await self.redis.hgetall(key))
        if not raw or b"record" not in raw:
            return None
        record = decode_record(raw.pop(b"record"))
        fields = _decode(raw)
        return TurnSnapshot.model_validate(
            {
                "state": fields["state"],
                "turn": record,
                "answers": {k[2:]: json.loads(v) for k, v in fields.items() if k.startswith("r:")},
            }
        )

    async def trace_of(self, channel_url: str, turn_id: str) -> tuple[str | None, str | None]:
        """The traceparent a paused turn was saved with (when tracing was on), and its user id."""
        key = keys.turn(keys.conversation_tag(channel_url), turn_id)
        trace, user_id = cast(list[bytes | None], await self.redis.hmget(key, ["trace", "user_id"]))
        return (trace.decode() if trace else None), (user_id.decode() if user_id else None)

    async def client_failures(self, channel_url: str) -> dict[str, int]:
        """Tool name -> consecutive device failures in this conversation."""
        raw = cast(
            dict[bytes, bytes],
            await self.redis.hgetall(keys.client_failures(keys.conversation_tag(channel_url))),
        )
        return {k.decode(): int(v) for k, v in raw.items()}

    async def record_client_outcomes(self, channel_url: str, outcomes: dict[str, bool]) -> None:
        """Count a device failure per tool, or reset the count when the device succeeded."""
        if not outcomes:
            return
        key = keys.client_failures(keys.conversation_tag(channel_url))
        async with self.redis.pipeline(transaction=True) as pipe:
            for tool, ok in outcomes.items():
                if ok:
                    pipe.hdel(key, tool)
                else:
                    pipe.hincrby(key, tool, 1)
            pipe.expire(key, keys.CLIENT_FAILURES_TTL_S)
            await pipe.execute()

    async def active_turn(self, channel_url: str, user_id: str) -> str | None:
        """The id of a person's paused (or resuming) turn in the channel, if any."""
        key = keys.active_turn(keys.conversation_tag(channel_url), user_id)
        raw = cast(bytes | None, await self.redis.get(key))
        return raw.decode() if raw else None

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
            keys=[keys.turn(tag, turn.turn_id), keys.active_turn(tag, turn.user_id), *call_keys],
            args=[
                keys.SETTLED_TTL_S,
                turn.turn_id,
                turn.user_id,
                turn.channel_url,
                keys.SUPERSEDED_TURN_TTL_S,
                how,
            ],
        )
        return bool(before == b"paused")

    async def due(self, now: float, *, limit: int = 100) -> list[tuple[str, str]]:
        """Paused turns whose calls expired by ``now``: (channel_url, turn_id)."""
        members = cast(
            list[bytes], await self.redis.zrangebyscore(keys.deadlines(), "-inf", now, start=0, num=limit)
        )
        return [(channel_url, turn_id) for channel_url, turn_id in (json.loads(m) for m in members)]

    async def forget_deadline(self, channel_url: str, turn_id: str) -> None:
        await self.redis.zrem(keys.deadlines(), _deadline_member(channel_url, turn_id))

    async def finish(
        self,
        channel_url: str,
        user_id: str,
        messages: list[ModelMessage],
        *,
        turn_id: str,
        paused: bool,
        answer: str | None = None,
        outbox: Sequence[TextOut | RpcOut] = (),
        consumed: Consumed | None = None,
    ) -> None:
        """Save the person's history and end the turn: the answer, what to send, the event it ends.

        A turn that had paused keeps only its state afterwards (its history is the person's history
        now); its call ids stay settled for the device's late answers.
        """
        tag = keys.conversation_tag(channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(keys.history(tag, user_id), self.history.encode(messages), ex=keys.HISTORY_TTL_S)
            if answer is not None:
                add_line(pipe, tag, Line(user_id=ASSISTANT, text=answer, to=user_id))
            pipe.delete(keys.effects(tag, turn_id))
            if paused:
                pipe.delete(keys.turn(tag, turn_id))
                pipe.hset(keys.turn(tag, turn_id), "state", "done")
                pipe.expire(keys.turn(tag, turn_id), keys.DONE_TURN_TTL_S)
            _end_step(pipe, tag, outbox, consumed)
            await pipe.execute()
        # The app-wide indexes after (other hash slots): a deadline left behind by a crash here is
        # dropped by the expiry scanner, which finds the turn done.
        async with self.redis.pipeline(transaction=False) as index:
            _remember_channel(index, user_id, channel_url)
            if paused:
                index.zrem(keys.deadlines(), _deadline_member(channel_url, turn_id))
                # Only clear the marker if it still names this turn (a later turn may have paused since).
                index.eval(_DELETE_IF_EQUAL, 1, keys.active_turn(tag, user_id), turn_id)
            await index.execute()


def _end_step(
    pipe: Pipeline, tag: str, outbox: Sequence[TextOut | RpcOut], consumed: Consumed | None
) -> None:
    """In the step's transaction: queue what it sends, and take the event it ran off the inbox."""
    if outbox:
        pipe.rpush(keys.outbox(tag), *(item.model_dump_json() for item in outbox))
        pipe.ltrim(keys.outbox(tag), -keys.OUTBOX_MAX, -1)
        pipe.expire(keys.outbox(tag), keys.INBOX_TTL_S)
    if consumed is not None:
        pipe.lrem(keys.inbox(tag), 1, consumed.raw.decode())
        pipe.hdel(keys.inbox_attempts(tag), consumed.eid)


def encode_record(turn: PausedTurn) -> bytes:
    """A paused run as kept in Redis: its JSON, compressed (mostly the run's messages, about 4× smaller)."""
    return zlib.compress(turn.model_dump_json().encode(), 6)


def decode_record(raw: bytes) -> PausedTurn:
    """The paused run from :func:`encode_record` (or plain JSON, as earlier versions kept it)."""
    return PausedTurn.model_validate_json(raw if raw.startswith(b"{") else zlib.decompress(raw))


def _remember_channel(pipe: Pipeline, user_id: str, channel_url: str) -> None:
    """Note where the person talked with the assistant (their data there is erased on request)."""
    pipe.sadd(keys.user_channels(user_id), channel_url)
    pipe.expire(keys.user_channels(user_id), keys.HISTORY_TTL_S)


def _deadline_member(channel_url: str, turn_id: str) -> str:
    return json.dumps([channel_url, turn_id])


def _decode(raw: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in raw.items()}
