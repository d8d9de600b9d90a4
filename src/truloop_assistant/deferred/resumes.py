"""When a paused turn gets a resume: the one rule, for whoever may have to queue it or run it.

A turn is in state ``resuming`` once every call of it is settled (each answered, or all cut short
by their deadline); such a turn gets a resume. Queuing a resume twice is harmless: the turn runs
once (its runner resumes only a turn in state ``resuming`` and moves it on).
"""

from __future__ import annotations

from typing import Protocol, TypeGuard

from ..store.records import TurnSnapshot
from ..store.turns import TurnStore


class ResumeQueue(Protocol):
    """Something that queues a paused turn's resume (the turn pipeline's intake does)."""

    async def resume(self, channel_url: str, turn_id: str) -> None: ...


def is_resuming(snapshot: TurnSnapshot | None) -> TypeGuard[TurnSnapshot]:
    """Whether the turn gets a resume now: it exists and is in state ``resuming``."""
    return snapshot is not None and snapshot.state == "resuming"


async def resume_if_due(store: TurnStore, queue: ResumeQueue, channel_url: str, turn_id: str) -> bool:
    """Queue the turn's resume if it is in state ``resuming``; whether it was queued.

    For everyone who finds a turn that may have been left waiting: an answer sent again (its first
    try may have failed before the resume was queued), the expiry scans.
    """
    if not is_resuming(await store.load_turn(channel_url, turn_id)):
        return False
    await queue.resume(channel_url, turn_id)
    return True
