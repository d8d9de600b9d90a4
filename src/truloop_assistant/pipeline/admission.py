"""Whether a user's chat message is run: the rules every channel's edge applies before queuing a turn.

Every way a message comes in (the chat service's webhook, the dev server's local channel, SMS, the
guest page) asks :class:`Admission`, so a message is refused for the same reasons, and the user is
told the same way, whichever way it came in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace
from typing import Literal

from redis.asyncio import Redis

from ..backends.users import DirectoryReads, UserDirectory
from ..channels.base import InboundMessage
from ..channels.members import Members
from ..protocol.files import MAX_FILES_PER_MESSAGE
from ..ratelimit import RateLimiter
from ..store import keys, recent_files
from ..store.admissions import Decision, decision_writes
from ..store.inbox import seen_read
from ..store.reads import Batch, Read, Write, run_writes
from ..store.recent_files import keep_writes
from ..store.transcript import Transcript
from ..store.turn_writes import channel_writes
from .audience import Heard, hear, unmentioned
from .intake import Intake, line_of
from .notices import Notices

log = logging.getLogger(__name__)

ROLE_LOOKUP_S = 0.5
"""How long admission waits for the directory to say whether someone is an admin (then: not one)."""
REPLAY_MARGIN_S = 3600
"""A message is run only while its re-delivery mark (``keys.SEEN_TTL_S``) would last this much longer."""


def outlived_its_mark(created_at_ms: int | None, *, now: float | None = None) -> float | None:
    """How old (in seconds) a message sent at ``created_at_ms`` is, when it is too old to be run: its
    re-delivery mark may be gone, so the same delivery could run again. None otherwise (and for a
    message that does not say when it was sent)."""
    if created_at_ms is None:
        return None
    age = (time.time() if now is None else now) - created_at_ms / 1000
    return age if age > keys.SEEN_TTL_S - REPLAY_MARGIN_S else None


@dataclass(frozen=True)
class Admission:
    """The rules a chat message passes before its turn is queued, with what they consult."""

    redis: Redis
    intake: Intake
    members: Members
    transcript: Transcript
    notices: Notices
    limiter: RateLimiter
    users: UserDirectory
    bot_user_id: str
    max_message_chars: int

    async def addressed(self, message: InboundMessage, *, listed: list[str] | None, mentioned: bool) -> bool:
        """Whether the message is for the assistant (members ``listed``, else asked for: the dev
        channel's); what people say to each other in its channel is kept as context for its later
        turns there."""
        heard = await hear(
            self.members,
            message.channel_url,
            listed=listed,
            mentioned=mentioned,
            bot_user_id=self.bot_user_id,
        )
        return await self.keep(message, heard, listed=listed)

    async def keep(
        self, message: InboundMessage, heard: Heard, *, listed: list[str] | None, supergroup: bool = False
    ) -> bool:
        """Note a message as ``heard`` (an overheard one as context); whether it is a turn."""
        if heard == "overheard":
            # Noted in the person's channels too: their lines here are erased with the rest on request.
            line = line_of(message)
            await run_writes(
                self.redis,
                [
                    self.transcript.add_write(message.channel_url, line),
                    *channel_writes(message.user_id, message.channel_url),
                    *self.decided(message, "not_addressed", noted=True),
                    *keep_writes(message.channel_url, message.user_id, message.files),
                ],
            )
        elif heard == "elsewhere":
            await run_writes(self.redis, self.decided(message, "not_addressed"))
        elif heard == "turn" and (listed or supergroup):
            # The turn decides where its device requests go by them (a Supergroup's: a group's way).
            await self.members.listed(message.channel_url, listed or [], supergroup=supergroup)
        return heard == "turn"

    async def direct(self, message: InboundMessage) -> str:
        """A message in a conversation of one person with the assistant that no chat service lists
        members of (their text messages, their guest page): always a turn, run unless refused (the
        rate limits, the length check and the record ``inspect`` shows hold as for any message);
        :meth:`queue`'s answers."""
        return await self.queue(message)

    async def queue(self, message: InboundMessage, *, undecided: bool = False, group: bool = False) -> str:
        """Queue the turn unless it is refused: ``queued``, ``dropped`` or why it was refused.

        ``undecided``: nobody knows yet whether the message is for the assistant; the worker finds
        out (:meth:`late`) and only then applies the rules that answer the person (length, rate).
        ``group``: a message that mentions the assistant in a group, which takes the files its sender
        sent there right before without a mention (``store.recent_files``).
        """
        if group and (earlier := await recent_files.take(self.redis, message.channel_url, message.user_id)):
            message = replace(message, files=(*earlier, *message.files)[:MAX_FILES_PER_MESSAGE])
        # Writes nobody waits for, sent together once the message is queued or refused (without a
        # transaction: their keys may be in several slots; none is needed for recovery).
        later = Batch(self.redis)
        refused = await self.refuse(message, later, undecided=undecided)
        status = refused or await self.intake.message(message, undecided=undecided)
        decision: Decision = "undecided" if undecided and status == "queued" else status
        # The intake notes the channel in the sender's (whatever it answers); a refusal does not.
        for write in self.decided(message, decision, noted=refused is None):
            later.write(write)
        await later.run()
        return status

    def decided(self, message: InboundMessage, decision: Decision, *, noted: bool = False) -> list[Write]:
        """Note what was decided of ``message`` (for ``inspect``), as writes to send with others; and,
        unless ``noted`` already, the channel in the sender's (an erasure finds their entries by it),
        when the sender is a person and not the assistant itself."""
        writes = decision_writes(message.channel_url, message.user_id, message.message_id, decision)
        if not noted and message.user_id != self.bot_user_id:
            writes += channel_writes(message.user_id, message.channel_url)
        return writes

    async def late(self, message: InboundMessage, *, patience_s: float) -> bool:
        """The worker's half for an undecided message: look the channel up (for up to ``patience_s``
        while the chat service is slow or rate-limits), keep the message as what it turned out to be, and
        say whether its turn runs. (Its channel is noted in the sender's: the intake queued it.)"""
        roster = await self.members.roster(message.channel_url, patience_s=patience_s)
        heard = unmentioned(roster, bot_user_id=self.bot_user_id)
        if heard == "elsewhere":
            log.info("message %s in %s is not for the assistant", message.message_id, message.channel_url)
            await run_writes(self.redis, self.decided(message, "not_addressed", noted=True))
            return False
        if heard == "turn":
            later = Batch(self.redis)
            role = await self._role_read(message.user_id).once(self.redis)
            refused = await self._over_limits(message, role, later)
            for write in self.decided(message, refused, noted=True) if refused is not None else []:
                later.write(write)
            await later.run()
            if refused is not None:
                return False
        else:
            await run_writes(self.redis, self.decided(message, "not_addressed", noted=True))
        line = line_of(message, turn=heard == "turn")
        await self.transcript.add_for(message.channel_url, message.message_id, line)
        return heard == "turn"

    async def refuse(
        self, message: InboundMessage, later: Batch, *, undecided: bool = False
    ) -> Literal["duplicate", "too_long", "rate_limited"] | None:
        """Why this message will not be run (a re-delivery, too long, over the rate limit), or None;
        of an ``undecided`` one only a re-delivery.

        ``later`` takes the writes that can wait until the message is queued.
        """
        # The re-delivery mark and the role (from a directory in this Redis, or as remembered), needed
        # either way: one round trip.
        batch = Batch(self.redis)
        seen = batch.add(seen_read(message.channel_url, message.message_id))
        role = batch.add(self._role_read(message.user_id))
        await batch.run()
        if seen.value:
            return "duplicate"  # a re-delivery must not count against the user's rate
        if undecided:
            return None
        return await self._over_limits(message, role.value, later)

    async def _over_limits(
        self, message: InboundMessage, role: bool | None, later: Batch
    ) -> Literal["too_long", "rate_limited"] | None:
        """``rate_limited`` or ``too_long`` (the person is told), or None; ``role``: as remembered. Every
        message counts against the sender's rate, a refused one too: refusals cost them as turns do (a
        message too long asks nobody for the role: the one remembered, else the members' rate)."""
        too_long = len(message.text) > self.max_message_chars
        admin = bool(role) if too_long else await self.is_admin(message.user_id, role, later)
        rate = await self.limiter.hit(message.user_id, scope="turns", admin=admin)
        if not rate.allowed:
            window = self.limiter.window_s(admin=admin)
            await self.notices.send(message, "rate_limited", window_s=window, once=True)
            return "rate_limited"
        if too_long:
            await self.notices.send(
                message, "too_long", limit=self.max_message_chars, length=len(message.text)
            )
            return "too_long"
        return None

    async def is_admin(self, user_id: str, remembered: bool | None, later: Batch) -> bool:
        """Whether the directory gives ``user_id`` the admin role: ``remembered`` from the last minute
        (or read a moment ago from a directory in this Redis), else asked now and remembered for a
        minute (the write goes in ``later``).

        A directory that does not answer within ``ROLE_LOOKUP_S`` makes the person a member for this
        message (the webhook must answer the chat service quickly); the next message asks again.
        """
        if remembered is not None:
            return remembered
        try:
            async with asyncio.timeout(ROLE_LOOKUP_S):
                admin = await self.users.is_admin(user_id)
        except TimeoutError:
            log.warning(
                "the directory did not say within %g s whether %s is an admin", ROLE_LOOKUP_S, user_id
            )
            return False
        key, value = keys.admin_role(user_id), b"1" if admin else b"0"
        later.write(lambda pipe: pipe.set(key, value, ex=keys.ADMIN_ROLE_TTL_S))
        return admin

    def _role_read(self, user_id: str) -> Read[bool | None]:
        """Whether ``user_id`` is an admin, from a directory in this Redis; else the role the directory
        gave them a moment ago, None when not remembered."""
        if isinstance(self.users, DirectoryReads):
            read = self.users.admin_read(user_id)
            return Read(read.send, read.decode)
        return _remembered_role(user_id)


def _remembered_role(user_id: str) -> Read[bool | None]:
    """The role the directory gave ``user_id`` a moment ago: admin or not, None when not remembered."""
    key = keys.admin_role(user_id)
    return Read(lambda r: r.get(key), lambda raw: None if raw is None else raw == b"1")
