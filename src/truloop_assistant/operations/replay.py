"""Replaying and purging the events conversations gave up after their retries (dead letters).

A replay puts the event back at the end of its conversation's inbox as a new push, through
:class:`~.intake.Intake` as the API pushes (the conversation is watched first, a drain queued when no
worker owns it), so it runs after what is waiting there; the dead letter is dropped once it is in.
Each dead letter is pushed once: the push is de-duplicated on its id (for ``keys.SEEN_TTL_S``), so
two replays of it at once, or one after a replay that stopped before dropping it, do not push it twice.

A user message runs as its turn (``m<message id>``) again. A turn that paused is known to the runner
and not run twice; a turn answered in one step leaves no such record, and what keeps it from running
again is the inbox's de-duplication on the message id, which a replay has to go around. So a message
whose turn the ledger shows running after the event was given up (another copy of it ran, from a
worker that had lost its claim or an earlier replay) is not pushed: it was answered meanwhile. A resume
whose turn no longer waits to resume (the person's next message resumed it, or it is gone) has
nothing left to run. A message whose sender had their data erased after it was given up is not
run (``keys.erased``): it is theirs, and erased. Either way the dead letter is dropped, and the
outcome says why.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import ValidationError
from redis.asyncio import Redis

from ..channels.base import InboundMessage
from ..deferred.resumes import is_resuming
from ..errors import OperatorError, ServiceUnavailable
from ..pipeline.intake import Intake
from ..store import keys
from ..store.inbox import EVENT, MessageEvent, ResumeEvent
from ..store.ledger import DeadLetter, Ledger, LedgerTurn
from ..store.turns import TurnStore

Outcome = Literal[
    "replayed",
    "already_replayed",
    "answered_meanwhile",
    "nothing_to_resume",
    "sender_erased",
    "unreadable",
    "inbox_full",
    "not_queued",
]
DROPPED: frozenset[Outcome] = frozenset(
    {"replayed", "already_replayed", "answered_meanwhile", "nothing_to_resume", "sender_erased"}
)
"""Outcomes that take the dead letter off the list: its event is in the inbox, or has nothing to do."""


class DeadLetterError(OperatorError):
    """No dead letter answers to what was asked (an unknown id or channel); the message says what to do."""


@dataclass(frozen=True)
class Replay:
    """What became of one dead letter that was replayed."""

    letter: DeadLetter
    outcome: Outcome
    detail: str
    """For a person: what happened, and what to do when it was not replayed."""

    @property
    def dropped(self) -> bool:
        return self.outcome in DROPPED


def choose(letters: Sequence[DeadLetter], ids: Sequence[str] | None, channel_url: str) -> list[DeadLetter]:
    """The dead letters ``ids`` name (each an id or the start of one), or all of them for None."""
    if ids is None:
        return list(letters)
    chosen: list[DeadLetter] = []
    for given in ids:
        matches = [d for d in letters if d.id == given] or [d for d in letters if d.id.startswith(given)]
        if not matches:
            kept = ", ".join(d.id for d in letters) or "none"
            raise DeadLetterError(
                f"{channel_url!r} has no dead letter {given!r} (it has: {kept}); "
                f"see truloop-assistant dead-letters list {channel_url}"
            )
        if len(matches) > 1:
            raise DeadLetterError(
                f"{given!r} is the start of {len(matches)} dead letters' ids in {channel_url!r} "
                f"({', '.join(d.id for d in matches)}): give more of it"
            )
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return chosen


class DeadLetters:
    """Replays a conversation's dead letters (purging them is the ledger's ``drop_dead_letters``)."""

    def __init__(self, redis: Redis, ledger: Ledger, intake: Intake, store: TurnStore) -> None:
        self.redis = redis
        self.ledger = ledger
        self.intake = intake
        self.store = store

    async def replay(self, channel_url: str, letters: Sequence[DeadLetter]) -> list[Replay]:
        """Push each dead letter's event into the conversation's inbox again, oldest first (so they
        run in the order they first came); the ones in, or with nothing left to do, are dropped."""
        done = []
        for letter in sorted(letters, key=lambda d: d.at):
            replay = await self._replay(channel_url, letter)
            if replay.dropped:
                await self.ledger.drop_dead_letters(channel_url, [letter])
            done.append(replay)
        return done

    async def _replay(self, channel_url: str, letter: DeadLetter) -> Replay:
        try:
            event = EVENT.validate_json(letter.event)
        except ValidationError:
            if letter.id.startswith("out:"):
                return Replay(
                    letter,
                    "unreadable",
                    "it is a message the channel refused (see its error), not an event to run: purge it",
                )
            why = "was cut when it was kept (too long)" if letter.cut else "cannot be read"
            return Replay(letter, "unreadable", f"its event {why}, so it cannot be replayed: purge it")
        if (skip := await self._done_meanwhile(channel_url, letter, event)) is not None:
            return skip
        waiting = await self.redis.llen(keys.inbox(keys.conversation_tag(channel_url)))
        pushed = event.model_copy(update={"eid": uuid.uuid4().hex, "trace": None})
        try:
            # The intake's push, de-duplicated on the dead letter rather than on the message id:
            # that mark is set since the message first came, and would refuse it.
            status = await self.intake._push(channel_url, pushed, dedup_id=f"replay:{letter.id}")
        except ServiceUnavailable:
            return Replay(
                letter,
                "not_queued",
                "its drain could not be queued, so it was not pushed; kept: try again",
            )
        if status == "duplicate":
            return Replay(letter, "already_replayed", "an earlier replay put it back in the inbox already")
        if status == "full":
            return Replay(
                letter,
                "inbox_full",
                f"the inbox is full ({keys.INBOX_MAX} events wait); kept: try again once they have run",
            )
        ahead = f"after the {waiting} events waiting there" if waiting else "next"
        return Replay(letter, "replayed", f"back in the inbox as event {pushed.eid}; it runs {ahead}")

    async def _done_meanwhile(
        self, channel_url: str, letter: DeadLetter, event: MessageEvent | ResumeEvent
    ) -> Replay | None:
        """A replay that would do nothing, or do it twice: why, or None to push it."""
        if isinstance(event, ResumeEvent):
            snapshot = await self.store.load_turn(channel_url, event.turn_id)
            if is_resuming(snapshot):
                return None
            now = "is gone" if snapshot is None else f"is {snapshot.state}"
            return Replay(
                letter, "nothing_to_resume", f"turn {event.turn_id} no longer waits to resume (it {now})"
            )
        erased = cast(bytes | None, await self.redis.get(keys.erased(event.user_id)))
        if erased is not None and float(erased) >= letter.at:
            return Replay(
                letter, "sender_erased", "its sender had their data erased since; not run, and dropped"
            )
        turn_id = InboundMessage(event.message_id, channel_url, event.user_id, "").turn_id
        record = await self.ledger.load(channel_url, turn_id)
        if record is None or _last_seen(record) <= letter.at:
            return None  # it never ran, or only the attempts that were given up ran it
        return Replay(
            letter,
            "answered_meanwhile",
            f"turn {turn_id} ran after it was given up ({record.state}); not run again",
        )


def _last_seen(turn: LedgerTurn) -> float:
    """When the ledger last saw the turn do something (its start, its end, its calls')."""
    times = [turn.started_at, turn.ended_at, *(t for c in turn.calls for t in (c.started_at, c.ended_at))]
    return max(t for t in times if t is not None)
