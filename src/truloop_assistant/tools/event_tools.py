"""Tools for events kept by the app (not the phone's calendar): list, create, change, invite."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, RunContext, ToolFailed

from ..backends.events import Event, EventNotFoundError
from .arguments import (
    MAX_USER_IDS,
    DateTimeWithOffset,
    EventId,
    OptionalDateTimeWithOffset,
    RemovableDateTimeWithOffset,
    UserIds,
)
from .deps import AgentDeps
from .event_checks import (
    check_create,
    check_invite,
    planned_update,
    validate_create,
    validate_invite,
    validate_update,
)
from .marks import DESTRUCTIVE
from .validation import date_range

event_server_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Location = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]
Details = Annotated[str, StringConstraints(strip_whitespace=True, max_length=4000)]

_DEADLINE = "ISO 8601 with UTC offset by which invitees should give their availability; not after the start"
_INVITEES = f"Directory user ids to invite, at most {MAX_USER_IDS} (find them with search_users)"


class EventList(BaseModel):
    events: list[Event] = Field(description="The events, sorted by start time")


class InviteResult(BaseModel):
    event: Event
    added: list[str] = Field(description="User ids invited now")
    already_invited: list[str] = Field(description="User ids invited before; nothing changed for them")


@event_server_toolset.tool
async def get_events(
    ctx: RunContext[AgentDeps],
    start_date: Annotated[
        DateTimeWithOffset,
        Field(description="Start, ISO 8601 with UTC offset, e.g. 2026-03-09T00:00:00+09:00"),
    ],
    end_date: Annotated[
        DateTimeWithOffset,
        Field(
            description="End, ISO 8601 with UTC offset, e.g. 2026-03-15T23:59:59+09:00; "
            "not before the start and at most 366 days after it"
        ),
    ],
) -> EventList:
    """List the events the current user organizes in the app between two date-times."""
    date_range(start_date, end_date)
    events = await ctx.deps.require_backends().events.list_events(ctx.deps.user_id, start_date, end_date)
    return EventList(events=events)


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_create)
async def create_event(
    ctx: RunContext[AgentDeps],
    title: Annotated[Title, Field(description="The event's title")],
    start_time: Annotated[
        DateTimeWithOffset,
        Field(description="Start, ISO 8601 with UTC offset, e.g. 2026-03-09T14:00:00+09:00"),
    ],
    end_time: Annotated[
        DateTimeWithOffset, Field(description="End, ISO 8601 with UTC offset; after the start")
    ],
    location: Annotated[Location | None, Field(description="Where it takes place")] = None,
    description: Annotated[Details | None, Field(description="Details for the invitees")] = None,
    invitee_user_ids: Annotated[UserIds | None, Field(description=_INVITEES)] = None,
    availability_deadline: Annotated[OptionalDateTimeWithOffset, Field(description=_DEADLINE)] = None,
) -> Event:
    """Create an event in the app, organized by the current user, optionally inviting people."""
    invitees = await check_create(ctx, start_time, end_time, invitee_user_ids, availability_deadline)
    return await ctx.deps.require_backends().events.create(
        ctx.deps.user_id,
        title=title,
        start_time=start_time.isoformat(),
        end_time=end_time.isoformat(),
        location=location or None,
        description=description or None,
        invitee_user_ids=invitees,
        availability_deadline=availability_deadline.isoformat() if availability_deadline else None,
    )


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_update)
async def update_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    title: Annotated[Title | None, Field(description="New title; omit to keep")] = None,
    start_time: Annotated[
        OptionalDateTimeWithOffset, Field(description="New start, ISO 8601 with offset; omit to keep")
    ] = None,
    end_time: Annotated[
        OptionalDateTimeWithOffset,
        Field(description="New end, ISO 8601 with offset, after the start; omit to keep"),
    ] = None,
    location: Annotated[
        Location | None, Field(description="New location; omit to keep, empty string to remove")
    ] = None,
    description: Annotated[
        Details | None, Field(description="New details; omit to keep, empty string to remove")
    ] = None,
    invitee_user_ids: Annotated[
        UserIds | None,
        Field(
            description=f"The complete new invitee list (at most {MAX_USER_IDS} directory user ids), "
            "replacing the current one; omit to keep, empty list to remove everyone. "
            "To add people use invite_to_event instead"
        ),
    ] = None,
    availability_deadline: Annotated[
        RemovableDateTimeWithOffset, Field(description=_DEADLINE + "; omit to keep, empty string to remove")
    ] = None,
) -> Event:
    """Change an event the current user organizes; only the given fields change."""
    event, changes = await planned_update(
        ctx,
        event_id,
        title=title,
        start_time=start_time,
        end_time=end_time,
        location=location,
        description=description,
        invitee_user_ids=invitee_user_ids,
        availability_deadline=availability_deadline,
    )
    try:
        return await ctx.deps.require_backends().events.update(event.event_id, **changes)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None


@event_server_toolset.tool(metadata=DESTRUCTIVE, args_validator=validate_invite)
async def invite_to_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    user_ids: Annotated[UserIds, Field(min_length=1, description=_INVITEES)],
) -> InviteResult:
    """Invite more people to an event the current user organizes; people already invited stay as they are."""
    event, ids = await check_invite(ctx, event_id, user_ids)
    already = [i for i in ids if i in event.invitee_user_ids]
    try:
        updated = await ctx.deps.require_backends().events.invite(event.event_id, ids)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    return InviteResult(event=updated, added=[i for i in ids if i not in already], already_invited=already)
