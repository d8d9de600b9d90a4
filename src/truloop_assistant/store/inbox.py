"""Each conversation's events, processed one at a time and in arrival order.

An event is pushed to the conversation's inbox; whoever pushes into an inbox with no owner makes
a new owner id, and the caller enqueues one drain job with it. The owner drains until the inbox
is empty, keeping its claim alive; a claim whose worker died expires and the retried (or next)
job takes over. So one run at a time per conversation, in order, many conversations in parallel.

An owner that has just asked a device for something may keep its claim a moment longer, marked as
waiting: a push into its inbox then rings its bell (a one-element list it blocks on) instead of
queuing a job, and the resume runs in the drain that asked.

Several messages in a row: when the event handed out is a person's message, the messages of the
same person directly behind it are handed out with it (:attr:`Next.more`), and the drain runs them
as one turn, the first message's. Gathering stops at the first event of someone else, a resume or an
undecided message (the order across people is kept), and within ``keys.BURST_MAX_MESSAGES``
messages and ``keys.BURST_MAX_CHARS`` characters of text; what is left runs as the next turn. Each
gathered event has its own start counted, and the step takes them all off in its transaction (or,
after a crash, none: a retry hands out the same head, and since an inbox only grows behind it, it
gathers the same messages again, or more, never fewer).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Annotated, Final, Literal, cast

from pydantic import BaseModel, Field, TypeAdapter
from redis.asyncio import Redis

from ..protocol.files import Attachment
from . import keys
from .inbox_handouts import Claim as Claim
from .inbox_handouts import Consumed as Consumed
from .inbox_handouts import Gathered as Gathered
from .inbox_handouts import Next as Next
from .inbox_scripts import (
    CLAIM,
    FORGET,
    NEXT,
    POP_IF_HEAD,
    PUSH,
    REFRESH,
    RELEASE,
    RELEASE_IF_QUIET,
    STOP_WAITING,
    UNDO,
)
from .outbox import Peeked
from .reads import Read
from .transcript import Line, append_args, encode_line

WORKER = f"{socket.gethostname()}:{os.getpid()}"
"""This process, as the drain note names the worker of a drain (its host and process id)."""


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
    files: list[Attachment] | None = None
    """The pictures, documents and voice notes the message carries; None (left out of the JSON) when
    it carries none: the inbox's scripts re-encode events, and an empty list would come back ``{}``."""
    name: str | None = None
    """The name the chat shows for the person (None, left out of the JSON, when it did not say)."""
    undecided: bool = False
    """The delivery did not say whom it is for: the worker looks the channel up before running it."""


class ResumeEvent(_Event):
    """Every call of a paused turn has an answer (or expired): resume it."""

    kind: Literal["resume"] = "resume"
    turn_id: str


InboxEvent = Annotated[MessageEvent | ResumeEvent, Field(discriminator="kind")]
EVENT: TypeAdapter[MessageEvent | ResumeEvent] = TypeAdapter(InboxEvent)


PushStatus = Literal["queued", "duplicate", "full"]


def seen_read(channel_url: str, message_id: str) -> Read[bool]:
    """:meth:`Inbox.seen` as a read to batch with others."""
    key = keys.seen(keys.conversation_tag(channel_url), message_id)
    return Read(lambda r: r.exists(key), bool)


def _pushed(found: list[bytes]) -> tuple[PushStatus, str | None]:
    status, owner = found
    return cast(PushStatus, status.decode()), owner.decode() or None


DELIVER: Final = "deliver"
"""What :meth:`Inbox.next` returns when the inbox is empty but the outbox is not: deliver, then ask again."""

WAIT: Final = "wait"
"""What :meth:`Inbox.next` returns when both are empty and the drain asked to wait: :meth:`Inbox.wait`,
then ask again (``back=True``)."""


class Inbox:
    def __init__(self, redis: Redis, *, owner_ttl_s: float) -> None:
        self.redis = redis
        self.owner_ttl_ms = int(owner_ttl_s * 1000)
        self._push = redis.register_script(PUSH)
        self._undo = redis.register_script(UNDO)
        self._claim = redis.register_script(CLAIM)
        self._refresh = redis.register_script(REFRESH)
        self._release_now = redis.register_script(RELEASE)
        self._release_if_quiet = redis.register_script(RELEASE_IF_QUIET)
        self._pop = redis.register_script(POP_IF_HEAD)
        self._next = redis.register_script(NEXT)
        self._stop_waiting = redis.register_script(STOP_WAITING)
        self._forget = redis.register_script(FORGET)

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
        return Read(lambda r: r.eval(PUSH, len(names), *names, *args), _pushed)

    def _push_args(
        self, event: MessageEvent | ResumeEvent, dedup_id: str | None, said: Line | None
    ) -> list[str | int]:
        return [
            event.model_dump_json(exclude_none=True),
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
                event.model_dump_json(exclude_none=True),
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
            keys=[
                keys.owner(tag),
                keys.outbox(tag),
                keys.inbox(tag),
                keys.inbox_attempts(tag),
                keys.drain_note(tag),
            ],
            args=[owner, self.owner_ttl_ms, keys.INBOX_TTL_S, WORKER, repr(time.time())],
        )
        match found:
            case [1, oldest]:
                return Claim(Peeked(oldest))
            case [2, *handed]:
                return Claim(Peeked(None), Next.handed_out(handed))
            case [3]:
                return Claim(Peeked(None))
        return None

    async def refresh(self, channel_url: str, owner: str) -> bool:
        """Keep a claim alive; False if it is no longer ours (it expired, maybe someone took it)."""
        tag = keys.conversation_tag(channel_url)
        return bool(await self._refresh(keys=[keys.owner(tag)], args=[owner, self.owner_ttl_ms]))

    async def head(self, channel_url: str) -> bytes | None:
        return cast(bytes | None, await self.redis.lindex(keys.inbox(keys.conversation_tag(channel_url)), 0))

    async def pop(self, channel_url: str, raw: bytes, eid: str, *, more: Gathered = ()) -> int:
        """Take an event (and the events gathered behind it) off the inbox if it is still its head;
        how many went."""
        tag = keys.conversation_tag(channel_url)
        args = [part for event in ((raw, eid), *more) for part in event]
        return int(await self._pop(keys=[keys.inbox(tag), keys.inbox_attempts(tag)], args=args))

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
                *(part for event in (done.more if done else ()) for part in event),
            ],
        )
        if found is None:
            return None
        if found == 0:
            return DELIVER
        if found == 1:
            return WAIT
        return Next.handed_out(found)

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

    async def release_if_quiet(self, channel_url: str, owner: str) -> bool:
        """Give up the claim unless events came in meanwhile (pushed while the claim was held, nobody
        else runs them); False: they did, and the claim is still ours."""
        tag = keys.conversation_tag(channel_url)
        found = await self._release_if_quiet(keys=[keys.owner(tag), keys.inbox(tag)], args=[owner])
        return int(found) != 2

    async def forget_user(self, channel_url: str, user_id: str, turn_ids: Sequence[str]) -> int:
        """Take the events of ``user_id`` off the inbox (bounded by ``INBOX_MAX``): their queued
        messages, and resumes of their turns (``turn_ids``); how many went. Others' events stay."""
        tag = keys.conversation_tag(channel_url)
        return int(
            await self._forget(keys=[keys.inbox(tag), keys.inbox_attempts(tag)], args=[user_id, *turn_ids])
        )
