"""The tool-call ledger: every call of a turn, with its status, timings, error and result, for operators.

One record per turn (see ``ledger_records.py``), rewritten at the end of each of its steps (so a step
run again after a crash writes the same record again); the newest ``keys.LEDGER_TURNS`` turns of a
conversation are kept, for ``keys.LEDGER_TTL_S`` after its last turn. Served by
``GET /api/v1/admin/conversations/{url}`` and ``truloop-assistant inspect``. The ledger also keeps
what a conversation's failures leave (``conversation_failures.py``): its last failure and the
events it gave up (dead letters).
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from . import keys
from .conversation_failures import ConversationFailures, DeadLetter
from .ledger_records import (
    ARG_CHARS,
    ERROR_CHARS,
    REDACTED,
    RESULT_BYTES,
    TURN_RESULT_BYTES,
    CallKind,
    CallStatus,
    Flag,
    LedgerCall,
    LedgerTurn,
    TurnState,
    kept_result,
    redact,
)
from .reads import Read, Write

__all__ = [
    "ARG_CHARS",
    "ERROR_CHARS",
    "REDACTED",
    "RESULT_BYTES",
    "TURN_RESULT_BYTES",
    "CallKind",
    "CallStatus",
    "DeadLetter",
    "Flag",
    "Ledger",
    "LedgerCall",
    "LedgerTurn",
    "TurnState",
    "kept_result",
    "redact",
]

# Write one turn's record. A turn new to the ledger is also put in its order, the oldest beyond
# LEDGER_TURNS are dropped and both keys live LEDGER_TTL_S more: a later write of the same turn (its
# next steps) is the record alone. KEYS: ledger, order. ARGV: turn id, record, started at, keep, ttl s.
_SAVE = """
if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
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


class Ledger(ConversationFailures):
    """A conversation's ledger of turns, and what its failures left."""

    def __init__(self, redis: Redis) -> None:
        super().__init__(redis)
        self._save = redis.register_script(_SAVE)

    async def save(self, channel_url: str, turn: LedgerTurn) -> None:
        names, args = self._save_parts(channel_url, turn)
        await self._save(keys=names, args=args)

    def save_write(self, channel_url: str, turn: LedgerTurn) -> Write:
        """:meth:`save` as a write to send in a step's own transaction (as ``EVAL``: a registered
        script in a pipeline costs a round trip of its own, ``SCRIPT EXISTS``, on every execution)."""
        names, args = self._save_parts(channel_url, turn)
        return lambda pipe: pipe.eval(_SAVE, len(names), *names, *args)

    def _save_parts(self, channel_url: str, turn: LedgerTurn) -> tuple[list[str], list[str | int | float]]:
        tag = keys.conversation_tag(channel_url)
        return [keys.ledger(tag), keys.ledger_order(tag)], [
            turn.turn_id,
            # Defaults left out: most calls have no error, flag or cut result (loading restores them).
            turn.bounded().model_dump_json(exclude_defaults=True),
            turn.started_at,
            keys.LEDGER_TURNS,
            keys.LEDGER_TTL_S,
        ]

    async def load(self, channel_url: str, turn_id: str) -> LedgerTurn | None:
        return await self.read(channel_url, turn_id).once(self.redis)

    def read(self, channel_url: str, turn_id: str) -> Read[LedgerTurn | None]:
        """:meth:`load` as a read to batch with others."""
        key = keys.ledger(keys.conversation_tag(channel_url))
        return Read(
            lambda r: r.hget(key, turn_id),
            lambda raw: None if raw is None else LedgerTurn.model_validate_json(raw),
        )

    async def turns(self, channel_url: str) -> list[LedgerTurn]:
        """The conversation's recorded turns, newest first."""
        tag = keys.conversation_tag(channel_url)
        ids = cast(list[bytes], await self.redis.zrevrange(keys.ledger_order(tag), 0, -1))
        if not ids:
            return []
        raws = cast(list[bytes | None], await self.redis.hmget(keys.ledger(tag), ids))
        return [LedgerTurn.model_validate_json(r) for r in raws if r is not None]

    async def forget_turns_of(self, channel_url: str, user_id: str) -> list[str]:
        """Drop the records of the turns ``user_id`` started (their messages, their calls' arguments
        and results: what they asked for and were told, others' contact details included); the ids
        of those turns. Other people's turns stay, even where they name the person."""
        tag = keys.conversation_tag(channel_url)
        mine = [turn.turn_id for turn in await self.turns(channel_url) if turn.user_id == user_id]
        if mine:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hdel(keys.ledger(tag), *mine)
                pipe.zrem(keys.ledger_order(tag), *mine)
                await pipe.execute()
        return mine
