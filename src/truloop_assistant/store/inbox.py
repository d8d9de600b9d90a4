"""Each conversation's events, processed one at a time and in arrival order.

An event is pushed to the conversation's inbox; whoever pushes into an inbox with no owner makes
a new owner id, and the caller enqueues one drain job with it. The owner drains until the inbox
is empty, keeping its claim alive; a claim whose worker died expires and the retried (or next)
job takes over. So one run at a time per conversation, in order, many conversations in parallel.

An owner that has just asked a device for something may keep its claim a moment longer, marked as
waiting: a push into its inbox then rings its bell (a one-element list it blocks on) instead of
queuing a job, and the resume runs in the drain that asked.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Final, Literal, cast

from pydantic import BaseModel, Field, TypeAdapter
from redis.asyncio import Redis

from . import keys
from .outbox import Peeked
from .reads import Read
from .transcript import APPEND_LINE, Line, append_args, encode_line


@dataclass
class Consumed:
    """The inbox event a step ran, taken off the inbox in the transaction that records the step.

    That transaction also reads the outbox's oldest message (``outbox``): what the drain delivers next.
    """

    raw: bytes
    eid: str
    outbox: Peeked | None = None
    """The outbox's oldest message once the step committed (None: no step committed with it)."""


class _Event(BaseModel):
    eid: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """Identifies this push of the event (attempts are counted per eid)."""
    trace: str | None = None
    """The W3C ``traceparent`` of the request that queued it, when tracing is on."""


class MessageEvent(_Event):
    """A user's message: run a new turn."""

    kind: Literal["message"] = "message"
    message_id: str
    user_id: str
    text: str
    undecided: bool = False
    """The delivery did not say whom it is for: the worker looks the channel up before running it."""


class ResumeEvent(_Event):
    """Every call of a paused turn has an answer (or expired): resume it."""

    kind: Literal["resume"] = "resume"
    turn_id: str


InboxEvent = Annotated[MessageEvent | ResumeEvent, Field(discriminator="kind")]
EVENT: TypeAdapter[MessageEvent | ResumeEvent] = TypeAdapter(InboxEvent)


# Wakes a drain that waits for a device's answer (see ``_NEXT``): a push, or an update for its outbox.
RING_IF_WAITING = """
local function ring_if_waiting(waiting, bell, ttl_ms)
  if redis.call('EXISTS', waiting) == 1 then
    redis.call('RPUSH', bell, '1')
    redis.call('PEXPIRE', bell, ttl_ms)
  end
end
"""

# Hands out the inbox's head with its start counted: {event, eid, starts}.
_HAND_OUT = """
local function hand_out(attempts, head, ttl)
  local eid = cjson.decode(head)['eid']
  local starts = redis.call('HINCRBY', attempts, eid, 1)
  redis.call('EXPIRE', attempts, ttl)
  return {head, eid, starts}
end
"""

# KEYS: seen mark (or the inbox when unused), inbox, owner, transcript, waiting drain, its bell
# ARGV: event, candidate owner, owner ttl ms, seen ttl s, use seen (0/1), inbox max, inbox ttl s,
#       the message's own line for the transcript ('' for none), minus the lines kept, transcript ttl s
_PUSH = (
    APPEND_LINE
    + RING_IF_WAITING
    + """
if ARGV[5] == '1' and not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[4]) then
  return {'duplicate', ''}
end
if redis.call('RPUSH', KEYS[2], ARGV[1]) > tonumber(ARGV[6]) then
  redis.call('RPOP', KEYS[2])  -- the event just pushed: the inbox was full
  if ARGV[5] == '1' then redis.call('DEL', KEYS[1]) end
  return {'full', ''}
end
redis.call('EXPIRE', KEYS[2], ARGV[7])
if ARGV[8] ~= '' then append_line(KEYS[4], ARGV[8], ARGV[9], ARGV[10]) end
if redis.call('SET', KEYS[3], ARGV[2], 'NX', 'PX', ARGV[3]) then return {'queued', ARGV[2]} end
ring_if_waiting(KEYS[5], KEYS[6], ARGV[3])  -- its drain may be waiting for this
return {'queued', ''}
"""
)

# Undo a push whose job could not be enqueued. KEYS: as _PUSH. ARGV: event, owner, use seen, line
_UNDO = """
redis.call('LREM', KEYS[2], -1, ARGV[1])
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) end
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
if ARGV[4] ~= '' then redis.call('LREM', KEYS[4], -1, ARGV[4]) end
return 1
"""

# Take (or keep) the claim, and read the outbox's oldest message: the drain delivers it first. With
# the outbox empty, the inbox's head is handed out as ``_NEXT`` would (its start counted), or, with
# the inbox empty too, the claim is given up: a drain's first step costs one round trip, not two.
# KEYS: owner, outbox, inbox, attempts. ARGV: owner, ttl ms, attempts ttl s. Returns {0} (not ours),
# {1, oldest message} (deliver first), {2, event, eid, starts} (run it) or {3} (nothing; released).
_CLAIM = (
    _HAND_OUT
    + """
local cur = redis.call('GET', KEYS[1])
if cur ~= ARGV[1] and cur then return {0} end
local oldest = redis.call('LINDEX', KEYS[2], 0)
if oldest then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, oldest}
end
local head = redis.call('LINDEX', KEYS[3], 0)
if not head then
  if cur then redis.call('DEL', KEYS[1]) end
  return {3}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local out = hand_out(KEYS[4], head, ARGV[3])
return {2, out[1], out[2], out[3]}
"""
)

_REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# A drain stopped while it waited for a device's answer gives the conversation up. KEYS: owner,
# waiting, bell. ARGV: owner.
_STOP_WAITING = """
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_POP_IF_HEAD = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then
  redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], ARGV[2])
  return 1
end
return 0
"""

# The drain's step to its next event, in one round trip: take the event it just ran off the inbox
# (if its step did not), then hand out the head with its start counted; or, with none left, give the
# claim up — unless something was put in the outbox meanwhile (a request's update), which the drain
# delivers first, or the drain asked to wait for a device's answer (ARGV[5] ms): then it keeps the
# claim and is marked waiting, so that a push rings its bell. A drain back from waiting (ARGV[6]) is
# unmarked first. KEYS: inbox, attempts, owner, outbox, waiting, bell. ARGV: the event just run (''
# for none), its eid, owner, attempts ttl, wait ms (0: none), back from waiting (0/1). Returns
# {event, eid, starts}; 0 to deliver first; 1 to wait; nil once released.
_NEXT = (
    _HAND_OUT
    + """
if ARGV[6] == '1' then redis.call('DEL', KEYS[5], KEYS[6]) end
local head = redis.call('LINDEX', KEYS[1], 0)
if ARGV[1] ~= '' and head == ARGV[1] then
  redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], ARGV[2])
  head = redis.call('LINDEX', KEYS[1], 0)
end
if not head then
  if redis.call('LLEN', KEYS[4]) > 0 then return 0 end
  local mine = redis.call('GET', KEYS[3]) == ARGV[3]
  if mine and tonumber(ARGV[5]) > 0 then
    redis.call('SET', KEYS[5], ARGV[3], 'PX', ARGV[5])
    return 1
  end
  if mine then redis.call('DEL', KEYS[3]) end
  return nil
end
return hand_out(KEYS[2], head, ARGV[4])
"""
)

# Take a person's events off the inbox: their messages, and resumes of their turns (a set, from
# ARGV[2] on). KEYS: inbox, attempts. ARGV: user id, turn ids... Returns how many were taken off.
_FORGET = """
local turns = {}
for i = 2, #ARGV do turns[ARGV[i]] = true end
local gone = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, event = pcall(cjson.decode, raw)
  if ok and type(event) == 'table' and (event['user_id'] == ARGV[1] or turns[event['turn_id']]) then
    gone = gone + redis.call('LREM', KEYS[1], 1, raw)
    if event['eid'] then redis.call('HDEL', KEYS[2], event['eid']) end
  end
end
return gone
"""

PushStatus = Literal["queued", "duplicate", "full"]


def seen_read(channel_url: str, message_id: str) -> Read[bool]:
    """:meth:`Inbox.seen` as a read to batch with others."""
    key = keys.seen(keys.conversation_tag(channel_url), message_id)
    return Read(lambda r: r.exists(key), bool)


def _pushed(found: list[bytes]) -> tuple[PushStatus, str | None]:
    status, owner = found
    return cast(PushStatus, status.decode()), owner.decode() or None


@dataclass(frozen=True)
class Next:
    """The event a drain runs next, and how many times a worker has started on it (this one included)."""

    raw: bytes
    eid: str
    starts: int


@dataclass(frozen=True)
class Claim:
    """A drain's claim on a conversation, with the oldest message its outbox held then, or (when it
    held none) the event to run first: None with both empty, and then the claim is given up."""

    outbox: Peeked
    first: Next | None = None

    @property
    def idle(self) -> bool:
        """Nothing to deliver or run: the claim was given up at once."""
        return self.outbox.raw is None and self.first is None


DELIVER: Final = "deliver"
"""What :meth:`Inbox.next` returns when the inbox is empty but the outbox is not: deliver, then ask again."""

WAIT: Final = "wait"
"""What :meth:`Inbox.next` returns when both are empty and the drain asked to wait: :meth:`Inbox.wait`,
then ask again (``back=True``)."""


class Inbox:
    def __init__(self, redis: Redis, *, owner_ttl_s: float) -> None:
        self.redis = redis
        self.owner_ttl_ms = int(owner_ttl_s * 1000)
        self._push = redis.register_script(_PUSH)
        self._undo = redis.register_script(_UNDO)
        self._claim = redis.register_script(_CLAIM)
        self._refresh = redis.register_script(_REFRESH)
        self._release_now = redis.register_script(_RELEASE)
        self._pop = redis.register_script(_POP_IF_HEAD)
        self._next = redis.register_script(_NEXT)
        self._stop_waiting = redis.register_script(_STOP_WAITING)
        self._forget = redis.register_script(_FORGET)

    def _keys(self, channel_url: str, dedup_id: str | None) -> list[str]:
        tag = keys.conversation_tag(channel_url)
        first = keys.seen(tag, dedup_id) if dedup_id else keys.inbox(tag)
        return [
            first,
            keys.inbox(tag),
            keys.owner(tag),
            keys.transcript(tag),
            keys.waiting(tag),
            keys.bell(tag),
        ]

    async def push(
        self,
        channel_url: str,
        event: MessageEvent | ResumeEvent,
        *,
        dedup_id: str | None = None,
        said: Line | None = None,
    ) -> tuple[PushStatus, str | None]:
        """Append an event; returns the status and, if this push made a new owner, its id. ``said``:
        the message's own line, added to the channel's transcript when the event is queued."""
        found = await self._push(
            keys=self._keys(channel_url, dedup_id), args=self._push_args(event, dedup_id, said)
        )
        return _pushed(found)

    def push_read(
        self,
        channel_url: str,
        event: MessageEvent | ResumeEvent,
        *,
        dedup_id: str | None = None,
        said: Line | None = None,
    ) -> Read[tuple[PushStatus, str | None]]:
        """:meth:`push` to send with others. The script goes as ``EVAL``: a registered script in a
        pipeline costs a round trip of its own (``SCRIPT EXISTS``) on every execution."""
        names, args = self._keys(channel_url, dedup_id), self._push_args(event, dedup_id, said)
        return Read(lambda r: r.eval(_PUSH, len(names), *names, *args), _pushed)

    def _push_args(
        self, event: MessageEvent | ResumeEvent, dedup_id: str | None, said: Line | None
    ) -> list[str | int]:
        return [
            event.model_dump_json(),
            f"drain:{uuid.uuid4().hex}",  # the owner this push makes, if the inbox has none
            self.owner_ttl_ms,
            keys.SEEN_TTL_S,
            1 if dedup_id else 0,
            keys.INBOX_MAX,
            keys.INBOX_TTL_S,
            *(append_args(said) if said is not None else ["", 0, 0]),
        ]

    async def undo_push(
        self,
        channel_url: str,
        event: MessageEvent | ResumeEvent,
        owner: str | None,
        *,
        dedup_id: str | None,
        said: Line | None = None,
    ) -> None:
        await self._undo(
            keys=self._keys(channel_url, dedup_id),
            args=[
                event.model_dump_json(),
                owner or "",
                1 if dedup_id else 0,
                "" if said is None else encode_line(said),
            ],
        )

    async def seen(self, channel_url: str, message_id: str) -> bool:
        """Whether a message with this id was already accepted (a re-delivery)."""
        return await seen_read(channel_url, message_id).once(self.redis)

    async def claim(self, channel_url: str, owner: str) -> Claim | None:
        """Take (or keep) the right to drain this conversation; None when another owner has it."""
        tag = keys.conversation_tag(channel_url)
        found = await self._claim(
            keys=[keys.owner(tag), keys.outbox(tag), keys.inbox(tag), keys.inbox_attempts(tag)],
            args=[owner, self.owner_ttl_ms, keys.INBOX_TTL_S],
        )
        match found:
            case [1, oldest]:
                return Claim(Peeked(oldest))
            case [2, raw, eid, starts]:
                return Claim(Peeked(None), Next(raw=raw, eid=eid.decode(), starts=int(starts)))
            case [3]:
                return Claim(Peeked(None))
        return None

    async def refresh(self, channel_url: str, owner: str) -> bool:
        """Keep a claim alive; False if it is no longer ours (it expired, maybe someone took it)."""
        tag = keys.conversation_tag(channel_url)
        return bool(await self._refresh(keys=[keys.owner(tag)], args=[owner, self.owner_ttl_ms]))

    async def head(self, channel_url: str) -> bytes | None:
        return cast(bytes | None, await self.redis.lindex(keys.inbox(keys.conversation_tag(channel_url)), 0))

    async def pop(self, channel_url: str, raw: bytes, eid: str) -> None:
        tag = keys.conversation_tag(channel_url)
        await self._pop(keys=[keys.inbox(tag), keys.inbox_attempts(tag)], args=[raw, eid])

    async def next(
        self,
        channel_url: str,
        owner: str,
        *,
        done: Consumed | None = None,
        wait_s: float = 0.0,
        back: bool = False,
    ) -> Next | Literal["deliver", "wait"] | None:
        """Take ``done`` off the inbox if its step did not, and return the next event with its start
        counted; :data:`DELIVER` when only the outbox has something; with both empty, :data:`WAIT`
        if the drain asked to wait ``wait_s`` for a device's answer, else None, and the claim is
        given up. ``back``: the drain is back from waiting."""
        tag = keys.conversation_tag(channel_url)
        found = await self._next(
            keys=[
                keys.inbox(tag),
                keys.inbox_attempts(tag),
                keys.owner(tag),
                keys.outbox(tag),
                keys.waiting(tag),
                keys.bell(tag),
            ],
            args=[
                done.raw if done else b"",
                done.eid if done else "",
                owner,
                keys.INBOX_TTL_S,
                int(wait_s * 1000),
                1 if back else 0,
            ],
        )
        if found is None:
            return None
        if found == 0:
            return DELIVER
        if found == 1:
            return WAIT
        raw, eid, starts = found
        return Next(raw=raw, eid=eid.decode(), starts=int(starts))

    async def wait(self, channel_url: str, timeout_s: float) -> bool:
        """Wait (after :data:`WAIT`) until a push rings the conversation's bell; False after ``timeout_s``."""
        bell = keys.bell(keys.conversation_tag(channel_url))
        # BLPOP's 0 would be "for ever"; Redis counts its timeout in milliseconds.
        return await self.redis.blpop([bell], timeout=max(timeout_s, 0.001)) is not None

    async def stop_waiting(self, channel_url: str, owner: str) -> None:
        """Give up the claim of a drain stopped while it waited (:meth:`wait`); what came meanwhile is
        found by the conversation's watch."""
        tag = keys.conversation_tag(channel_url)
        await self._stop_waiting(keys=[keys.owner(tag), keys.waiting(tag), keys.bell(tag)], args=[owner])

    async def release(self, channel_url: str, owner: str) -> None:
        """Give up the claim (if it is still ours) with events left: a scanner queues the next drain."""
        await self._release_now(keys=[keys.owner(keys.conversation_tag(channel_url))], args=[owner])

    async def forget_user(self, channel_url: str, user_id: str, turn_ids: Sequence[str]) -> int:
        """Take the events of ``user_id`` off the inbox (bounded by ``INBOX_MAX``): their queued
        messages, and resumes of their turns (``turn_ids``); how many went. Others' events stay."""
        tag = keys.conversation_tag(channel_url)
        return int(
            await self._forget(keys=[keys.inbox(tag), keys.inbox_attempts(tag)], args=[user_id, *turn_ids])
        )
