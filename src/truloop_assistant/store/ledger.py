"""The tool-call ledger: every call of a turn, with its status, timings and error, for operators.

One record per turn, rewritten at the end of each of its steps (so a step run again after a crash
writes the same record again); the newest ``keys.LEDGER_TURNS`` turns of a conversation are kept,
for ``keys.LEDGER_TTL_S`` after its last turn. Served by ``GET /api/v1/admin/conversations/{url}``
and ``truloop-assistant inspect``. Conversations that gave events up keep the last few, with the
error (dead letters).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Literal, cast

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from . import keys

CallKind = Literal["server", "device", "approval"]
CallStatus = Literal["pending", "success", "failed", "denied", "expired", "superseded"]
TurnState = Literal["running", "paused", "answered", "failed", "limited", "superseded"]
Flag = Literal["invalid", "no_result", "answered_while_pending"]

ARG_CHARS = 300
"""A string argument is kept up to this many characters."""
ERROR_CHARS = 500
"""An error is kept up to this many characters."""
_SECRET = re.compile(r"token|secret|password|passwd|api[_-]?key|authorization|credential|cookie", re.I)
REDACTED = "[redacted]"


class LedgerCall(BaseModel):
    call_id: str
    """The JSON-RPC id for device and approval calls (what the phone saw); the model's id otherwise."""
    tool: str
    kind: CallKind
    status: CallStatus
    args: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None
    flag: Flag | None = None
    """Set by the verifier: an invalid call, a call without a result, an answer given while it was pending."""

    def ended(self, status: CallStatus, at: float, *, error: str | None = None) -> LedgerCall:
        started = self.started_at if self.started_at is not None else at
        return self.model_copy(
            update={
                "status": status,
                "error": error if error is not None else self.error,
                "ended_at": at,
                "duration_ms": round((at - started) * 1000, 1),
            }
        )


class LedgerTurn(BaseModel):
    turn_id: str
    user_id: str
    state: TurnState
    started_at: float
    ended_at: float | None = None
    model_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: list[LedgerCall] = Field(default_factory=list)

    def with_calls(self, calls: list[LedgerCall]) -> LedgerTurn:
        """The record with ``calls`` added, or replacing the entries with the same ``call_id``."""
        merged = {c.call_id: c for c in self.calls}
        for call in calls:
            merged[call.call_id] = call
        return self.model_copy(update={"calls": list(merged.values())})

    def call(self, call_id: str) -> LedgerCall | None:
        return next((c for c in self.calls if c.call_id == call_id), None)


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the ledger keeps them: secrets replaced, long text cut."""
    return {k: _redacted(k, v) for k, v in args.items()}


def _redacted(name: str, value: Any) -> Any:
    if _SECRET.search(name):
        return REDACTED
    if isinstance(value, str):
        return value if len(value) <= ARG_CHARS else value[:ARG_CHARS] + "…"
    if isinstance(value, dict):
        return {str(k): _redacted(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(name, v) for v in value[:50]]
    return value


# Write one turn's record and keep only the newest LEDGER_TURNS of the conversation.
_SAVE = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if extra > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, extra - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1)
  redis.call('HDEL', KEYS[1], unpack(old))
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
"""


class Ledger:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._save = redis.register_script(_SAVE)

    async def save(self, channel_url: str, turn: LedgerTurn) -> None:
        tag = keys.conversation_tag(channel_url)
        await self._save(
            keys=[keys.ledger(tag), keys.ledger_order(tag)],
            args=[
                turn.turn_id,
                turn.model_dump_json(),
                turn.started_at,
                keys.LEDGER_TURNS,
                keys.LEDGER_TTL_S,
            ],
        )

    async def load(self, channel_url: str, turn_id: str) -> LedgerTurn | None:
        raw = await self.redis.hget(keys.ledger(keys.conversation_tag(channel_url)), turn_id)
        return None if raw is None else LedgerTurn.model_validate_json(raw)

    async def turns(self, channel_url: str) -> list[LedgerTurn]:
        """The conversation's recorded turns, newest first."""
        tag = keys.conversation_tag(channel_url)
        ids = cast(list[bytes], await self.redis.zrevrange(keys.ledger_order(tag), 0, -1))
        if not ids:
            return []
        raws = cast(list[bytes | None], await self.redis.hmget(keys.ledger(tag), ids))
        return [LedgerTurn.model_validate_json(r) for r in raws if r is not None]

    async def add_dead_letter(self, channel_url: str, event: str, error: str) -> None:
        """Keep an event given up after its retries, with why (bounded, newest first)."""
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        entry = json.dumps({"at": time.time(), "error": error[:1000], "event": event[:4000]})
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, entry)
            pipe.ltrim(key, 0, keys.DEAD_LETTERS_MAX - 1)
            pipe.expire(key, keys.LEDGER_TTL_S)
            await pipe.execute()

    async def note_failure(self, channel_url: str, eid: str, error: str) -> None:
        """Remember the conversation's last step that raised (``inspect`` shows it)."""
        key = keys.last_failure(keys.conversation_tag(channel_url))
        entry = json.dumps({"at": time.time(), "event": eid, "error": error[:1000]})
        await self.redis.set(key, entry, ex=keys.LEDGER_TTL_S)

    async def last_failure(self, channel_url: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.last_failure(keys.conversation_tag(channel_url)))
        return None if raw is None else cast(dict[str, Any], json.loads(raw))

    async def dead_letters(self, channel_url: str) -> list[dict[str, Any]]:
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        return [json.loads(r) for r in cast(list[bytes], await self.redis.lrange(key, 0, -1))]
