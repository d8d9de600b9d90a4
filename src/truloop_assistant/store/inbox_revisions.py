"""A person's edit or deletion of a message, applied to its conversation's inbox and transcript at once.

One script on the conversation's hash slot (:data:`~.inbox_scripts.REVISE`): whether the message still
waits, is being run, or ran is decided in the same atomic step that changes it, so a drain never hands
out half an edit, and a Redis Cluster runs it on one node.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Literal, cast

from redis.asyncio import Redis

from . import keys
from .admissions import Decision
from .inbox_scripts import REVISE

Where = Literal["waiting", "running", "ran"]
"""Where the message was: still ``waiting`` in the inbox (changed there), ``running`` (its step has it;
left alone), or ``ran`` (gone from the inbox: run already, or never seen here)."""


@dataclass(frozen=True)
class Revised:
    """What an edit or a deletion found: where the message was, and whether its line was changed."""

    where: Where
    line: bool


class InboxRevisions:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._revise = redis.register_script(REVISE)

    async def revise(
        self,
        channel_url: str,
        message_id: str,
        user_id: str,
        *,
        waiting: str | None,
        ran: str | None,
        decision: Decision,
    ) -> Revised:
        """Give message ``message_id`` the text ``waiting`` while it waits (None: take it off the
        inbox), and its transcript line the text ``ran`` once it ran (None: take the line out); a
        waiting message's line follows ``waiting``. ``decision`` (``edited``, ``deleted``, …) is noted
        for ``inspect`` when the message was found. A deletion (both None) also marks the message seen."""
        tag = keys.conversation_tag(channel_url)
        deleting = waiting is None and ran is None
        entry = json.dumps(
            {"at": round(time.time(), 3), "decision": decision, "user_id": user_id, "message_id": message_id}
        )
        found = await self._revise(
            keys=[
                keys.inbox(tag),
                keys.inbox_attempts(tag),
                keys.transcript(tag),
                keys.seen(tag, message_id),
                keys.admissions(tag),
            ],
            args=[
                message_id,
                waiting or "",
                "drop" if waiting is None else "edit",
                (ran or "")[: keys.TRANSCRIPT_LINE_CHARS],
                "drop" if ran is None else "edit",
                keys.SEEN_TTL_S if deleting else "",
                entry,
                keys.ADMISSIONS_MAX,
                keys.ADMISSIONS_TTL_S,
            ],
        )
        where, lines = found
        return Revised(where=cast(Where, where.decode()), line=int(lines) > 0)
