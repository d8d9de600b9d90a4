"""Tools for events kept by the app (not the phone's calendar): list, create, change, invite, cancel.

Invitees are directory users; guests are chat users outside the directory, or people invited by phone
number (:mod:`.phone_numbers`). Each gets their invitation in a 1:1 channel with the assistant, or by
text message (see :mod:`.invitations`), and answers there with their dates; they are told there when
the event changes or is cancelled.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, RunContext, ToolFailed

from ..backends.events import Event, EventNotFoundError
from .agent_deps import AgentDeps
from .arguments import (
    DateTimeWithOffset,
    EventId,
    OptionalDateTimeWithOffset,
    OptionalDayOrMoment,
    PhoneNumbers,
    UserIds,
)
from .event_checks import (
    Clearable,
    check_create,
    check_invite,
    owned_event,
    planned_update,
    validate_cancel,
    validate_create,
    validate_invite,
    validate_update,
)
from .guest_tools import InvitedEventView, invited_view
from .invitations import invite_languages, invite_people, note_invited, tell_cancelled, tell_changed
from .marks import DESTRUCTIVE
from .validation import first_moment, moment_range

event_server_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Location = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]
Details = Annotated[str, StringConstraints(strip_whitespace=True, max_length=4000)]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)]
Query = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]

_DEADLINE = "Dates due by then; not after the start"
_INVITATIONS = (
    "Invitee or guest user id -> 'sent', 'queued: ...' (it goes out by itself later), "
    "or why their invitation was not delivered (they are invited anyway)"
)


class EventList(BaseModel):
    events: list[Event] = Field(description="Events the user organizes, sorted by start time")
    invited: list[InvitedEventView] = Field(
        description="Events the user is invited to (by someone else), sorted by start time"
    )


class ScheduledEvent(Event):
    invitations: dict[str, str] = Field(default_factory=dict, description=_INVITATIONS)


class UpdatedEvent(ScheduledEvent):
    told: dict[str, str] = Field(
        default_factory=dict,
        description="Invitee or guest user id (invited before) -> 'sent', 'queued: ...' (it goes out by "
        "itself later), or why they could not be told of the change in their chat",
    )


class InviteResult(BaseModel):
    event: Event
    added: list[str] = Field(description="User ids invited now")
    already_invited: list[str] = Field(description="User ids invited before; nothing changed for them")
    guests_added: list[str] = Field(description="Guests invited now")
    guests_already_invited: list[str] = Field(description="Guests invited before; not invited again")
    invitations: dict[str, str] = Field(description=_INVITATIONS)


class CancelResult(BaseModel):
    event: Event
    told: dict[str, str] = Field(
        description="Invitee or guest user id -> 'sent', 'queued: ...' (it goes out by itself later), or why "
        "they could not be told in their chat"
    )


LOOK_BACK = timedelta(days=30)
"""How far back ``get_events`` looks without a start ("the review I set up last time")."""
LOOK_AHEAD = timedelta(days=335)
"""How far ahead it looks from there without an end (with the look back: the 366 days it allows)."""


@event_server_toolset.tool
async def get_events(
    ctx: RunContext[AgentDeps],
    start_date: OptionalDayOrMoment = None,
    end_date: OptionalDayOrMoment = None,
    query: Query | None = None,
) -> EventList:
    """Events made in this app (not the phone calendar) the user organizes or is invited to,
    overlapping start_date..end_date (as get_calendar_events; default: 30 days ago to a year ahead)."""
    zone = ctx.deps.timezone
    start = first_moment(start_date or ctx.deps.now() - LOOK_BACK, zone)
    start, end = moment_range(start, end_date or start + LOOK_BACK + LOOK_AHEAD, zone)
    events = ctx.deps.require_backends().events
    organized = await events.list_events(ctx.deps.user_id, start, end)
    invited = [e for e in await events.list_invited(ctx.deps.user_id) if e.overlaps(start, end)]
    words = (query or "").lower().split()

    def matches(event: Event) -> bool:
        text = f"{event.title} {event.description or ''}".lower()
        return all(word in text for word in words)

    return EventList(
        events=[e for e in organized if matches(e)],
        invited=[await invited_view(ctx, e) for e in invited if matches(e)],
    )


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_create)
async def create_event(
    ctx: RunContext[AgentDeps],
    title: Title,
    start_time: DateTimeWithOffset,
    end_time: Annotated[
        DateTimeWithOffset, Field(description="Default: 1 hour (30 min for a coffee or call)")
    ],
    location: Location | None = None,
    description: Details | None = None,
    invitee_user_ids: UserIds | None = None,
    availability_deadline: Annotated[OptionalDateTimeWithOffset, Field(description=_DEADLINE)] = None,
    guest_user_ids: UserIds | None = None,
    guest_phone_numbers: PhoneNumbers | None = None,
) -> ScheduledEvent:
    """Create an event the user organizes; everyone invited is asked for their dates."""
    invitees, guests = await check_create(
        ctx,
        start_time,
        end_time,
        invitee_user_ids,
        availability_deadline,
        guest_user_ids,
        guest_phone_numbers,
    )
    languages = await invite_languages(ctx, [*invitees, *guests])
    event = await ctx.deps.require_backends().events.create(
        ctx.deps.user_id,
        title=title,
        start_time=start_time,
        end_time=end_time,
        location=location or None,
        description=description or None,
        invitee_user_ids=invitees,
        availability_deadline=availability_deadline,
        guests={g: languages[g] for g in guests},
        languages={i: languages[i] for i in invitees},
    )
    await note_invited(ctx, len(event.invited))
    return ScheduledEvent(**event.model_dump(), invitations=await invite_people(ctx, event, event.invited))


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_update)
async def update_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    title: Title | None = None,
    start_time: Annotated[
        OptionalDateTimeWithOffset, Field(description="Alone, it moves the event (same length)")
    ] = None,
    end_time: OptionalDateTimeWithOffset = None,
    location: Location | None = None,
    description: Details | None = None,
    availability_deadline: Annotated[OptionalDateTimeWithOffset, Field(description=_DEADLINE)] = None,
    add_invitee_user_ids: UserIds | None = None,
    remove_invitee_user_ids: UserIds | None = None,
    add_guest_user_ids: UserIds | None = None,
    remove_guest_user_ids: UserIds | None = None,
    add_guest_phone_numbers: PhoneNumbers | None = None,
    remove_guest_phone_numbers: PhoneNumbers | None = None,
    clear: Annotated[list[Clearable] | None, Field(description="Fields to remove")] = None,
) -> UpdatedEvent:
    """Change an event the user organizes (only what is given); everyone invited is told."""
    event, changes = await planned_update(
        ctx,
        event_id,
        title=title,
        start_time=start_time,
        end_time=end_time,
        location=location,
        description=description,
        availability_deadline=availability_deadline,
        add_invitee_user_ids=add_invitee_user_ids,
        remove_invitee_user_ids=remove_invitee_user_ids,
        add_guest_user_ids=add_guest_user_ids,
        remove_guest_user_ids=remove_guest_user_ids,
        add_guest_phone_numbers=add_guest_phone_numbers,
        remove_guest_phone_numbers=remove_guest_phone_numbers,
        clear=clear,
    )
    guests: list[str] | None = changes.pop("guest_user_ids", None)
    new_guests = [g for g in guests or [] if g not in event.guest_user_ids]
    new_invitees = [i for i in changes.get("invitee_user_ids") or [] if i not in event.invitee_user_ids]
    languages = await invite_languages(ctx, [*new_invitees, *new_guests])
    if guests is not None:  # the new list: known guests keep their language
        known = {**event.guests, **languages}
        changes["guests"] = {g: known[g] for g in guests}
    if new_invitees:
        changes["languages"] = {i: languages[i] for i in new_invitees}
    try:
        updated = await ctx.deps.require_backends().events.update(event.event_id, **changes)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    await note_invited(ctx, len(new_invitees) + len(new_guests))
    return UpdatedEvent(
        **updated.model_dump(),
        invitations=await invite_people(ctx, updated, [*new_invitees, *new_guests]),
        told=await tell_changed(ctx, event, updated),
    )


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_invite)
async def invite_to_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    invitee_user_ids: UserIds | None = None,
    guest_user_ids: UserIds | None = None,
    guest_phone_numbers: PhoneNumbers | None = None,
) -> InviteResult:
    """Invite more people to an event the user organizes."""
    event, ids, guests = await check_invite(
        ctx, event_id, invitee_user_ids, guest_user_ids, guest_phone_numbers
    )
    already = [i for i in ids if i in event.invitee_user_ids]
    added = [i for i in ids if i not in already]
    new_guests = [g for g in guests if g not in event.guest_user_ids]
    languages = await invite_languages(ctx, [*added, *new_guests])
    try:
        updated = await ctx.deps.require_backends().events.invite(
            event.event_id,
            ids,
            {g: languages[g] for g in new_guests},
            languages={i: languages[i] for i in added},
        )
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    await note_invited(ctx, len(added) + len(new_guests))
    return InviteResult(
        event=updated,
        added=added,
        already_invited=already,
        guests_added=new_guests,
        guests_already_invited=[g for g in guests if g not in new_guests],
        invitations=await invite_people(ctx, updated, [*added, *new_guests]),
    )


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_cancel)
async def cancel_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    reason: Reason | None = None,
) -> CancelResult:
    """Cancel an event the user organizes; everyone invited is told."""
    event = await owned_event(ctx, event_id, cancelled=True)  # a cancellation run again tells the rest
    try:
        cancelled = await ctx.deps.require_backends().events.cancel(event.event_id, reason=reason or None)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    return CancelResult(event=cancelled, told=await tell_cancelled(ctx, cancelled))
