"""What the inbox hands a drain (:class:`Next`, :class:`Claim`) and what its step consumes
(:class:`Consumed`): an event, with the same person's messages gathered behind it (see ``inbox.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .outbox import Peeked

Gathered = tuple[tuple[bytes, str], ...]
"""Events handed out behind the head, in order, as (event, eid): a person's messages in a row."""


@dataclass
class Consumed:
    """The inbox event a step ran (and those gathered behind it, ``more``), taken off the inbox in
    the transaction that records the step.

    That transaction also reads the outbox's oldest message (``outbox``): what the drain delivers next.
    """

    raw: bytes
    eid: str
    outbox: Peeked | None = None
    """The outbox's oldest message once the step committed (None: no step committed with it)."""
    more: Gathered = ()
    """The events gathered behind ``raw`` into the same turn, in order."""

    @property
    def events(self) -> Gathered:
        """Every event the step consumes, the first one first."""
        return ((self.raw, self.eid), *self.more)

    def keep(self, count: int) -> None:
        """Consume only the first ``count`` gathered events: a turn run before answered those, and
        the rest wait for the next turn."""
        self.more = self.more[: max(count, 0)]


@dataclass(frozen=True)
class Next:
    """The event a drain runs next, how many times a worker has started on it (this one included),
    and the messages gathered behind it (``more``: the same person's, run in the same turn)."""

    raw: bytes
    eid: str
    starts: int
    more: Gathered = ()

    @classmethod
    def handed_out(cls, found: Sequence[Any]) -> Next:
        """From a script's ``hand_out`` reply: event, eid, starts, then gathered event, eid pairs."""
        raw, eid, starts, *rest = found
        gathered = tuple((r, e.decode()) for r, e in zip(rest[::2], rest[1::2], strict=True))
        return cls(raw=raw, eid=eid.decode(), starts=int(starts), more=gathered)


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
