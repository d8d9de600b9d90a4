"""The tool-call ledger: every call of a turn, with its status, timings, error and result, for operators.

One record per turn, rewritten at the end of each of its steps (so a step run again after a crash
writes the same record again); the newest ``keys.LEDGER_TURNS`` turns of a conversation are kept,
for ``keys.LEDGER_TTL_S`` after its last turn. Arguments and results are kept in their JSON form,
secrets redacted and long values cut, so a record stays small: a result up to ``RESULT_BYTES``, a
turn's results up to ``TURN_RESULT_BYTES`` (``result_cut`` says when one was cut). Served by
``GET /api/v1/admin/conversations/{url}`` and ``truloop-assistant inspect``. Conversations that
gave events up keep the last few, with the error and an id (dead letters), and an app-wide index
names the conversations that keep some (``truloop-assistant dead-letters``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic_core import PydanticSerializationError
from redis.asyncio import Redis
from redis.exceptions import RedisError

from . import keys

CallKind = Literal["server", "device", "approval"]
CallStatus = Literal["pending", "success", "failed", "denied", "expired", "superseded"]
TurnState = Literal["running", "paused", "answered", "failed", "limited", "superseded"]
Flag = Literal["invalid", "no_result", "answered_while_pending"]

ARG_CHARS = 300
"""A string argument (or a string in a result) is kept up to this many characters."""
LIST_ITEMS = 50
"""A list in arguments or a result is kept up to this many items."""
ERROR_CHARS = 500
"""An error is kept up to this many characters."""
RESULT_BYTES = 2048
"""A result is kept up to this many bytes of JSON (UTF-8) in all; beyond, its JSON text is cut."""
TURN_RESULT_BYTES = 16 * 1024
"""A turn's results are kept up to this many bytes in all; the later calls of a busier turn keep none."""
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
    result: Any = None
    """What the call gave back, in JSON form: a server tool's return value, a device's ``result``, an
    approval's ``{"confirmed": ...}``; secrets redacted and long text cut as in ``args``."""
    result_cut: bool = False
    """The result was cut to fit (or, past the turn's bound, left out)."""

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

    def with_result(self, value: Any) -> LedgerCall:
        """The call with ``value`` as its result, as the ledger keeps it (see :func:`kept_result`)."""
        result, cut = kept_result(value)
        return self.model_copy(update={"result": result, "result_cut": cut})


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

    def bounded(self) -> LedgerTurn:
        """The record with its results within ``TURN_RESULT_BYTES``: the first calls keep theirs, and
        from the first that does not fit on, none do (a result left out stays out when a later step
        writes the record again)."""
        left = TURN_RESULT_BYTES
        calls = []
        for call in self.calls:
            if call.result is None and call.result_cut:
                left = -1  # left out when the record was written before
            elif call.result is not None:
                left -= _size(call.result)
                if left < 0:
                    call = call.model_copy(update={"result": None, "result_cut": True})
            calls.append(call)
        return self.model_copy(update={"calls": calls})


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the ledger keeps them: secrets replaced, long text cut."""
    redactor = _Redactor()
    return {k: redactor(k, v) for k, v in args.items()}


def kept_result(value: Any) -> tuple[Any, bool]:
    """A result as the ledger keeps it, and whether it was cut: its JSON form, redacted as arguments
    are (secrets by name, long strings and lists cut), then its JSON text cut to ``RESULT_BYTES``."""
    redactor = _Redactor()
    kept = redactor("", _json_form(value))
    if _size(kept) <= RESULT_BYTES:
        return kept, redactor.cut
    text = json.dumps(kept, ensure_ascii=False).encode()[: RESULT_BYTES - len("…".encode())]
    return text.decode(errors="ignore") + "…", True


class _Redactor:
    """Replaces secrets (by their key's name) and cuts long text and lists; remembers whether it cut."""

    def __init__(self) -> None:
        self.cut = False

    def __call__(self, name: str, value: Any) -> Any:
        if _SECRET.search(name):
            return REDACTED
        if isinstance(value, str):
            if len(value) <= ARG_CHARS:
                return value
            self.cut = True
            return value[:ARG_CHARS] + "…"
        if isinstance(value, dict):
            return {str(k): self(str(k), v) for k, v in value.items()}
        if isinstance(value, list):
            self.cut = self.cut or len(value) > LIST_ITEMS
            return [self(name, v) for v in value[:LIST_ITEMS]]
        return value


# Any value a tool may return, in the JSON form the model is sent (bytes as base64, as pydantic-ai does).
_ANY = TypeAdapter(Any, config=ConfigDict(ser_json_bytes="base64"))


def _json_form(value: Any) -> Any:
    try:
        return _ANY.dump_python(value, mode="json")
    except (PydanticSerializationError, ValueError):
        return str(value)  # a value pydantic cannot serialize: its text says what it was


def _size(value: Any) -> int:
    """Bytes of ``value`` as JSON (UTF-8), as Redis keeps it."""
    return len(json.dumps(value, ensure_ascii=False).encode())


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


ERROR_KEPT = 1000
"""A dead letter's error is kept up to this many characters."""
DEAD_EVENT_CHARS = 32_000
"""A dead letter keeps its event whole up to this many characters (a message is at most
``TRULOOP_MAX_MESSAGE_CHARS``, 4,000 by default); a longer one is cut, and cannot be replayed."""

# Keep a dead letter once per id, newest first, bounded. KEYS: the list. ARGV: entry, id, max, ttl.
_ADD_DEAD = """
for _, kept in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, entry = pcall(cjson.decode, kept)
  if ok and type(entry) == 'table' and entry['id'] == ARGV[2] then return 0 end
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# Take a conversation off the index only if nobody moved its score since it was read.
_FORGET_IF_UNCHANGED = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


@dataclass(frozen=True)
class DeadLetter:
    """An event a conversation gave up after its retries, with why."""

    id: str
    """The id of the push that was given up (its ``eid``), as the drain's log line names it."""
    at: float
    error: str
    event: str
    """The inbox event's JSON (what the person wrote included), whole unless ``cut``."""
    cut: bool
    stored: bytes
    """The entry as Redis keeps it, to remove exactly this one."""

    @classmethod
    def read(cls, stored: bytes) -> DeadLetter:
        """An entry of the list; one kept before dead letters had an id takes its event's ``eid``."""
        entry = json.loads(stored)
        event = str(entry.get("event", ""))
        return cls(
            id=str(entry.get("id") or _eid_in(event) or hashlib.sha256(stored).hexdigest()[:32]),
            at=float(entry.get("at", 0.0)),
            error=str(entry.get("error", "")),
            event=event,
            cut=bool(entry.get("cut", False)),
            stored=stored,
        )


def _eid_in(event: str) -> str | None:
    """The ``eid`` of an inbox event's JSON, even of one cut short (it comes first)."""
    found = re.search(r'"eid"\s*:\s*"([^"]+)"', event)
    return found.group(1) if found else None


class Ledger:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._save = redis.register_script(_SAVE)
        self._add_dead = redis.register_script(_ADD_DEAD)
        self._forget_dead = redis.register_script(_FORGET_IF_UNCHANGED)

    async def save(self, channel_url: str, turn: LedgerTurn) -> None:
        tag = keys.conversation_tag(channel_url)
        await self._save(
            keys=[keys.ledger(tag), keys.ledger_order(tag)],
            args=[
                turn.turn_id,
                # Defaults left out: most calls have no error, flag or cut result (loading restores them).
                turn.bounded().model_dump_json(exclude_defaults=True),
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

    async def add_dead_letter(self, channel_url: str, event: str, error: str, *, eid: str) -> None:
        """Keep an event given up after its retries, with why, under its push's id (bounded, newest
        first; once per id), and name its conversation in the index of dead letters."""
        now = time.time()
        entry: dict[str, Any] = {"id": eid, "at": now, "error": error[:ERROR_KEPT], "event": event}
        if len(event) > DEAD_EVENT_CHARS:
            entry.update(event=event[:DEAD_EVENT_CHARS], cut=True)
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        args: list[str | int] = [
            json.dumps(entry, ensure_ascii=False),
            eid,
            keys.DEAD_LETTERS_MAX,
            keys.LEDGER_TTL_S,
        ]
        if not await self._add_dead(keys=[key], args=args):
            return  # kept already (a worker gave it up again after a crash)
        index = keys.dead_letter_conversations()
        # After the list (another hash slot): a conversation leaves the index only when its list is
        # empty and its score has not moved since (see drop_dead_letters). Best effort: the dead
        # letter is kept whatever happens here, and inspect shows it.
        with suppress(RedisError):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(index, {channel_url: now})
                pipe.zremrangebyscore(index, "-inf", now - keys.LEDGER_TTL_S)
                pipe.zremrangebyrank(index, 0, -keys.DEAD_LETTER_CONVERSATIONS_MAX - 1)
                pipe.expire(index, keys.LEDGER_TTL_S)
                await pipe.execute()

    async def note_failure(self, channel_url: str, eid: str, error: str) -> None:
        """Remember the conversation's last step that raised (``inspect`` shows it)."""
        key = keys.last_failure(keys.conversation_tag(channel_url))
        entry = json.dumps({"at": time.time(), "event": eid, "error": error[:1000]})
        await self.redis.set(key, entry, ex=keys.LEDGER_TTL_S)

    async def last_failure(self, channel_url: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.last_failure(keys.conversation_tag(channel_url)))
        return None if raw is None else cast(dict[str, Any], json.loads(raw))

    async def dead_letters(self, channel_url: str) -> list[DeadLetter]:
        """The conversation's dead letters, newest first."""
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        return [DeadLetter.read(r) for r in cast(list[bytes], await self.redis.lrange(key, 0, -1))]

    async def all_dead_letters(self) -> dict[str, list[DeadLetter]]:
        """Every indexed conversation's dead letters, the one that gave an event up last first."""
        index = keys.dead_letter_conversations()
        named = cast(
            list[tuple[bytes, float]],
            await self.redis.zrevrangebyscore(
                index, "+inf", time.time() - keys.LEDGER_TTL_S, withscores=True
            ),
        )
        if not named:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for channel_url, _ in named:
                pipe.lrange(keys.dead_letters(keys.conversation_tag(channel_url.decode())), 0, -1)
            lists = cast(list[list[bytes]], await pipe.execute())
        found = {}
        for (channel_url, score), raws in zip(named, lists, strict=True):
            if raws:
                found[channel_url.decode()] = [DeadLetter.read(r) for r in raws]
            else:  # its dead letters expired, or were replayed or purged
                await self._forget_dead(keys=[index], args=[channel_url, repr(score)])
        return found

    async def drop_dead_letters(self, channel_url: str, letters: Sequence[DeadLetter]) -> int:
        """Remove these dead letters (those still there); how many were removed."""
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        index = keys.dead_letter_conversations()
        score = await self.redis.zscore(index, channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            for letter in letters:
                pipe.lrem(key, 1, letter.stored.decode())
            pipe.llen(key)
            *removed, left = await pipe.execute()
        if not left and score is not None:
            # Unless a new dead letter moved its score meanwhile (it is added to the list first).
            await self._forget_dead(keys=[index], args=[channel_url, repr(score)])
        return sum(int(r) for r in removed)
