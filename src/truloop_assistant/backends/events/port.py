"""What an event is, the port of the store that keeps it, and when an invited person is reminded.

Every time of an event is an aware ``datetime``; stored and shown to the model as ISO 8601 with its
UTC offset (``datetime.isoformat``), as it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any, Protocol

from pydantic import AwareDatetime, BaseModel, Field, PlainSerializer

from ...errors import TruloopError

REMINDER_LEAD = timedelta(days=1)
"""An invited person who has not given their availability is reminded this long before the deadline."""


def _iso(value: datetime) -> str:
    return value.isoformat()


EventTime = Annotated[AwareDatetime, PlainSerializer(_iso, return_type=str)]
"""A moment with its UTC offset; written as ``datetime.isoformat`` (``+00:00``, never ``Z``)."""


class Event(BaseModel):
    event_id: str
    owner_id: str
    title: str
    start_time: EventTime = Field(description="ISO 8601 with UTC offset")
    end_time: EventTime = Field(description="ISO 8601 with UTC offset")
    location: str | None = None
    description: str | None = None
    invitee_user_ids: list[str] = Field(default_factory=list, description="Invited directory users")
    guest_user_ids: list[str] = Field(
        default_factory=list, description="Invited guests: chat user ids of people outside the directory"
    )
    availability_deadline: EventTime | None = Field(
        default=None,
        description="ISO 8601 with offset: invitees and guests should give their availability by then",
    )
    guest_availability: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Invitee or guest user id -> the dates (YYYY-MM-DD) they are available; "
        "who has not answered is missing",
    )
    guest_languages: dict[str, str] = Field(
        default_factory=dict,
        description="Invitee or guest user id -> the language of their invitation and reminder",
    )
    cancelled_at: EventTime | None = Field(default=None, description="When the organizer cancelled it")
    cancel_reason: str | None = None
    created_at: EventTime
    updated_at: EventTime

    @property
    def guests(self) -> dict[str, str]:
        """Guest user id -> the language of their invitation (``""`` when not known)."""
        return {g: self.guest_languages.get(g, "") for g in self.guest_user_ids}

    @property
    def invited(self) -> list[str]:
        """Everyone invited: the invitees, then the guests."""
        return [*self.invitee_user_ids, *self.guest_user_ids]

    def is_invited(self, user_id: str) -> bool:
        """Whether the person is an invitee or a guest of the event."""
        return user_id in self.invitee_user_ids or user_id in self.guest_user_ids

    def overlaps(self, start: datetime, end: datetime) -> bool:
        """Whether the event takes place at some time in [start, end)."""
        return self.start_time < end and self.end_time > start

    def owing(self) -> dict[str, datetime]:
        """Invited people who still owe their availability -> the deadline they owe it by (none once
        cancelled, nor without a deadline)."""
        deadline = self.availability_deadline
        if deadline is None or self.cancelled_at is not None:
            return {}
        return {p: deadline for p in self.invited if p not in self.guest_availability}


class EventNotFoundError(TruloopError, LookupError):
    """No event has this id (or it has expired)."""


class EventStore(Protocol):
    async def list_events(self, owner_id: str, start: datetime, end: datetime) -> list[Event]:
        """The owner's events overlapping [start, end), sorted by start; cancelled ones left out."""
        ...

    async def get(self, event_id: str) -> Event | None: ...

    async def create(
        self,
        owner_id: str,
        *,
        title: str,
        start_time: datetime,
        end_time: datetime,
        location: str | None = None,
        description: str | None = None,
        invitee_user_ids: Iterable[str] = (),
        availability_deadline: datetime | None = None,
        guests: Mapping[str, str] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> Event:
        """``guests``: guest user id -> the language of their invitation (reminders use it too);
        ``languages``: the same for invitees."""
        ...

    async def update(self, event_id: str, **changes: Any) -> Event:
        """Change fields (``guests``: the whole new mapping); raises :class:`EventNotFoundError`."""
        ...

    async def invite(
        self,
        event_id: str,
        user_ids: Iterable[str],
        guests: Mapping[str, str] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> Event:
        """Add invitees and guests (invited ones stay as they are; ``languages``: the new invitees'
        invitation languages); raises :class:`EventNotFoundError`."""
        ...

    async def cancel(self, event_id: str, *, reason: str | None = None) -> Event:
        """Mark the event cancelled (a cancelled one stays as it was); raises :class:`EventNotFoundError`."""
        ...

    async def set_availability(self, event_id: str, user_id: str, dates: list[str]) -> Event:
        """Replace an invitee's or guest's available dates; raises :class:`EventNotFoundError`."""
        ...

    async def forget_guests(self, event_id: str, user_ids: Iterable[str]) -> Event:
        """Take guests off the event (their dates and languages too); raises :class:`EventNotFoundError`."""
        ...

    async def list_invited(self, user_id: str) -> list[Event]:
        """Events the user is invited to (invitee or guest), sorted by start; cancelled ones left out."""
        ...


def reminder_at(deadline: datetime, now: datetime) -> datetime | None:
    """When to remind a guest who owes their availability by ``deadline``; None once it has passed.

    :data:`REMINDER_LEAD` before the deadline; a guest invited closer to the deadline than that is
    reminded halfway between now (their invitation) and the deadline, never with the invitation.
    """
    if deadline <= now:
        return None
    return max(deadline - REMINDER_LEAD, now + (deadline - now) / 2)


def reminder_member(event_id: str, guest_id: str) -> str:
    """The guest's entry in ``keys.guest_reminders`` (event ids hold no ``:``)."""
    return f"{event_id}:{guest_id}"
