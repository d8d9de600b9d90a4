"""Invited people (invitees and guests) who have not given their availability get one reminder
before the deadline.

The event store keeps when each is due in Redis (``keys.guest_reminders``; see
:func:`~truloop_assistant.backends.events.reminder_at` for when), so nothing depends on a timer in
one process: every worker scans once a second. A scanner claims a due reminder atomically by moving
it ``keys.REMINDER_LEASE_S`` ahead (one scanner wins), sends it, then removes it; if its worker dies
or the channel is down meanwhile, the reminder comes due again after the lease and the retry carries
the same ``dedup_id``, so the person sees it once. Someone who answered, left the event, or whose
event was cancelled has no entry any more; one whose deadline passed is dropped unsent.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import cast
from zoneinfo import ZoneInfo

from redis.asyncio import Redis

from ..agent.inviter import worth_retrying
from ..backends import Backends
from ..backends.events import Event
from ..backends.users import UserDirectoryError, UserProfile
from ..channels.base import ChannelSendError
from ..channels.relay import RelayError
from ..store import keys
from ..store.pending_deliveries import CLAIM_DUE
from ..tools.agent_deps import Inviter
from ..tools.event_messages import as_language, reminder, zone_of

log = logging.getLogger(__name__)

SCAN_LIMIT = 100
"""Reminders one scan sends at most; the rest wait for the next scan."""

# Remove a claimed entry unless it was scheduled anew since (a moved deadline).
_FINISH = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


class AvailabilityReminders:
    """The reminder scan: claim what is due, check it still holds, deliver it in the person's channel."""

    def __init__(self, redis: Redis, backends: Backends, inviter: Inviter, *, timezone: ZoneInfo) -> None:
        self.redis = redis
        self.backends = backends
        self.inviter = inviter
        self.timezone = timezone
        self._claim = redis.register_script(CLAIM_DUE)
        self._finish = redis.register_script(_FINISH)

    async def send_due(self, *, now: float | None = None) -> int:
        """Send every reminder due by ``now`` (default: the current time); how many were sent."""
        at = time.time() if now is None else now
        due = cast(
            list[bytes],
            await self.redis.zrangebyscore(keys.guest_reminders(), "-inf", at, start=0, num=SCAN_LIMIT),
        )
        sent = 0
        for member in (m.decode() for m in due):
            lease = repr(at + keys.REMINDER_LEASE_S)
            if await self._claim(keys=[keys.guest_reminders()], args=[member, repr(at), lease]) is None:
                continue  # another scanner took it, or it was answered or moved meanwhile
            if await self._remind(member, at):
                sent += 1
        return sent

    async def _remind(self, member: str, at: float) -> bool:
        """Deliver one claimed reminder; False when it no longer applies or the delivery failed."""
        event_id, _, guest = member.partition(":")
        event = await self.backends.events.get(event_id)
        if event is None or guest not in event.owing():
            await self._done(member, at)
            return False
        deadline = event.owing()[guest]
        if deadline <= datetime.fromtimestamp(at, UTC):
            log.info("the deadline of %s passed before %s was reminded", event_id, guest)
            await self._done(member, at)
            return False
        try:
            text = await self._text(event, guest)
            dedup_id = f"remind:{member}:{deadline.isoformat()}"
            await self.inviter.deliver(guest, text, dedup_id=dedup_id, on_behalf_of=event.owner_id)
        except (ChannelSendError, RelayError) as exc:
            retry = worth_retrying(exc)
            log.warning(
                "reminder for %s on %s %s: %s", guest, event_id, "retried" if retry else "dropped", exc
            )
            if not retry:
                await self._done(member, at)
            return False
        await self._done(member, at)
        log.info("reminded %s to give their availability for %s", guest, event_id)
        return True

    async def _text(self, event: Event, person: str) -> str:
        """In the person's language; an invitee's own time zone, a guest's the organizer's."""
        owner = await self._profile(event.owner_id)
        invitee = await self._profile(person) if person in event.invitee_user_ids else None
        stored = as_language(event.guest_languages.get(person), "en")
        language = await self.inviter.known_language(person) or stored
        organizer = owner.name if owner else event.owner_id
        zone = zone_of(invitee or owner, self.timezone)
        return reminder(event, organizer=organizer, language=language, zone=zone)

    async def _profile(self, user_id: str) -> UserProfile | None:
        try:
            return await self.backends.users.get_profile(user_id)
        except UserDirectoryError:
            return None

    async def _done(self, member: str, at: float) -> None:
        await self._finish(keys=[keys.guest_reminders()], args=[member, repr(at + keys.REMINDER_LEASE_S)])
