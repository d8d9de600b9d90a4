"""Tools for invited people: see the events they are invited to and say which dates suit them.

Both kinds of invited people use them: guests (chat users outside the directory, served by the guest
agent) and invitees from the directory (members, whose agent has every other tool too). The invited
person is the current user (``ctx.deps.user_id``), who got an invitation in their chat with the
assistant; they see only events they are invited to, never others' availability or contacts. The
event's organizer sees everyone invited and their dates instead.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, Tool, ToolFailed

from ..backends.events import Event, EventNotFoundError, EventTime
from ..backends.users import UserDirectoryError
from ..protocol.addresses import phone_of
from .agent_deps import AgentDeps
from .arguments import MAX_AVAILABLE_DATES, EventId, IsoDate
from .marks import CHANGES, KEEPS_EMPTY
from .validation import available_dates as checked_dates

guest_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


class InvitedEventView(BaseModel):
    event_id: str
    title: str
    start_time: EventTime = Field(description="ISO 8601 with UTC offset")
    end_time: EventTime = Field(description="ISO 8601 with UTC offset")
    location: str | None
    description: str | None
    organizer_name: str | None = Field(description="The organizer's name, if the directory knows them")
    availability_deadline: EventTime | None = Field(description="Give your availability by then (ISO 8601)")
    your_available_dates: list[str] = Field(description="The dates you said you are available (YYYY-MM-DD)")
    invitee_user_ids: list[str] | None = Field(
        default=None, description="Only when you organize the event: the invited directory users"
    )
    guest_user_ids: list[str] | None = Field(
        default=None, description="Only when you organize the event: its guests"
    )
    availability: dict[str, list[str]] | None = Field(
        default=None,
        description="Only when you organize the event: each invitee's and guest's dates (YYYY-MM-DD); "
        "who has not answered is missing",
    )
    not_answered: list[str] | None = Field(
        default=None, description="Only when you organize the event: who has not given their dates yet"
    )
    not_texted: dict[str, str] | None = Field(
        default=None,
        description="Only when you organize the event: guests reached by phone whom texts no longer "
        "reach, and why (they opted out with STOP, or the last text failed)",
    )


class InvitedEvents(BaseModel):
    events: list[InvitedEventView] = Field(description="Events you are invited to, sorted by start time")


class AvailabilitySaved(BaseModel):
    event_id: str
    title: str
    available_dates: list[str] = Field(description="The dates saved, sorted (YYYY-MM-DD)")


async def invited_view(ctx: RunContext[AgentDeps], event: Event) -> InvitedEventView:
    """The event as the current user may see it: in full when they organize it, else their own part."""
    organizes = event.owner_id == ctx.deps.user_id
    try:
        organizer = await ctx.deps.require_backends().users.get_profile(event.owner_id)
    except UserDirectoryError:
        organizer = None  # the name is a nicety; the event is still worth showing
    return InvitedEventView(
        event_id=event.event_id,
        title=event.title,
        start_time=event.start_time,
        end_time=event.end_time,
        location=event.location,
        description=event.description,
        organizer_name=organizer.name if organizer else None,
        availability_deadline=event.availability_deadline,
        your_available_dates=event.guest_availability.get(ctx.deps.user_id, []),
        invitee_user_ids=event.invitee_user_ids if organizes else None,
        guest_user_ids=event.guest_user_ids if organizes else None,
        availability=event.guest_availability if organizes else None,
        not_answered=[p for p in event.invited if p not in event.guest_availability] if organizes else None,
        not_texted=await _not_texted(ctx, event) if organizes else None,
    )


async def _not_texted(ctx: RunContext[AgentDeps], event: Event) -> dict[str, str] | None:
    """The event's guests reached by phone that texts no longer reach, and why (None: none)."""
    phone = ctx.deps.phone_invites
    guests = [g for g in event.guest_user_ids if phone_of(g) is not None]
    if phone is None or phone.unreachable is None or not guests:
        return None
    return await phone.unreachable(guests) or None


async def _invited_event(ctx: RunContext[AgentDeps], event_id: str, *, organizer: bool = False) -> Event:
    """The event if the current user is invited to it (or, with ``organizer``, organizes it) and it stands."""
    event = await ctx.deps.require_backends().events.get(event_id)
    user = ctx.deps.user_id
    if event is None or not (event.is_invited(user) or (organizer and event.owner_id == user)):
        raise ToolFailed(f"you are not invited to an event with id {event_id!r} (or it does not exist)")
    if event.cancelled_at is not None:
        why = f" ({event.cancel_reason})" if event.cancel_reason else ""
        raise ToolFailed(f"{event.title!r} was cancelled by its organizer{why}; it no longer takes answers")
    return event


@guest_toolset.tool
async def list_invited_events(ctx: RunContext[AgentDeps]) -> InvitedEvents:
    """Events others invited the user to, with deadlines and the dates they gave."""
    events = await ctx.deps.require_backends().events.list_invited(ctx.deps.user_id)
    return InvitedEvents(events=[await invited_view(ctx, e) for e in events])


@guest_toolset.tool
async def get_event_details(ctx: RunContext[AgentDeps], event_id: EventId) -> InvitedEventView:
    """An event the user is invited to or organizes (its organizer sees everyone's dates)."""
    return await invited_view(ctx, await _invited_event(ctx, event_id, organizer=True))


Dates = Annotated[list[IsoDate], Field(max_length=MAX_AVAILABLE_DATES)]
AvailableDates = Annotated[Dates | None, Field(description="Replaces the dates given before; [] for none")]
AddedDates = Annotated[Dates | None, Field(description="Dates that work too")]
RemovedDates = Annotated[Dates | None, Field(description="Dates that no longer work")]
AVAILABILITY = {**CHANGES, KEEPS_EMPTY: ("available_dates",)}
"""How the availability tools are marked: they change something, and ``available_dates: []`` says
the person can come on none of the dates."""


@guest_toolset.tool(metadata=AVAILABILITY)
async def update_guest_availability(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    available_dates: AvailableDates = None,
    add_dates: AddedDates = None,
    remove_dates: RemovedDates = None,
) -> AvailabilitySaved:
    """Save the dates on which the current user, an invited guest, is available for an event."""
    return await _save_availability(ctx, event_id, available_dates, add_dates, remove_dates)


async def update_availability(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    available_dates: AvailableDates = None,
    add_dates: AddedDates = None,
    remove_dates: RemovedDates = None,
) -> AvailabilitySaved:
    """The dates the user can come to an event they are invited to."""
    return await _save_availability(ctx, event_id, available_dates, add_dates, remove_dates)


invitee_toolset: FunctionToolset[AgentDeps] = FunctionToolset(
    [list_invited_events, get_event_details, Tool(update_availability, metadata=AVAILABILITY)]
)
"""What members use of these tools: their invitations and their dates, and, as organizers, an
event's details with everyone's dates."""


async def _save_availability(
    ctx: RunContext[AgentDeps],
    event_id: str,
    available_dates: list[date] | None,
    add_dates: list[date] | None = None,
    remove_dates: list[date] | None = None,
) -> AvailabilitySaved:
    """Save the invited current user's dates (the same rules for invitees and guests): all of them
    (``available_dates``, ``[]`` alone for none), or those added to and taken from what they said."""
    if available_dates is None and not add_dates and not remove_dates:
        raise ModelRetry(
            "say which dates: available_dates (all of them; [] if none), add_dates or remove_dates"
        )
    event = await _invited_event(ctx, event_id)
    now = ctx.deps.now()
    today, last = now.date(), None
    if (deadline := event.availability_deadline) is not None:
        last = deadline.date()
        if deadline <= now:
            raise ToolFailed(
                f"the deadline for giving availability for {event.title!r} was "
                f"{deadline.isoformat()}; it has passed, so the organizer has to be asked directly"
            )
    if available_dates or not (add_dates or remove_dates):  # [] beside added or removed dates says nothing
        given = available_dates or []
    else:
        given = [date.fromisoformat(d) for d in event.guest_availability.get(ctx.deps.user_id, [])]
        given = [d for d in given if d >= today and (last is None or d <= last)]  # only days still open
    removed = set(remove_dates or [])
    dates = checked_dates(
        [d for d in [*given, *(add_dates or [])] if d not in removed], today=today, last=last
    )
    try:
        saved = await ctx.deps.require_backends().events.set_availability(
            event.event_id, ctx.deps.user_id, [d.isoformat() for d in dates]
        )
    except EventNotFoundError:
        raise ToolFailed(f"the event {event_id!r} no longer exists") from None
    return AvailabilitySaved(
        event_id=saved.event_id, title=saved.title, available_dates=saved.guest_availability[ctx.deps.user_id]
    )
