"""Tools for events kept by the app (not the phone's calendar): list, create, change, invite."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, ToolFailed

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
from .marks import DESTRUCTIVE
from .user_tools import check_users_exist
from .validation import date_range, deadline_not_after, end_after_start

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


async def _owned_event(ctx: RunContext[AgentDeps], event_id: str) -> Event:
    event = await ctx.deps.require_backends().events.get(event_id)
    if event is None:
        raise ToolFailed(f"there is no event with id {event_id!r}")
    if event.owner_id != ctx.deps.user_id:
        raise ToolFailed(f"only the organizer can change event {event_id!r}; the current user is not it")
    return event


async def _invitees(ctx: RunContext[AgentDeps], user_ids: list[str], *, field: str) -> list[str]:
    """The invitees without the organizer; all of them must be in the directory."""
    ids = [i for i in user_ids if i != ctx.deps.user_id]
    await check_users_exist(ctx, ids, field=field)
    return ids


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


@event_server_toolset.tool(metadata=DESTRUCTIVE)
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
    end_after_start(start_time, end_time)
    if availability_deadline is not None:
        deadline_not_after(availability_deadline, start_time)
    invitees = await _invitees(ctx, invitee_user_ids or [], field="invitee_user_ids")
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


@event_server_toolset.tool(metadata=DESTRUCTIVE)
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
    event = await _owned_event(ctx, event_id)
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title
    if location is not None:
        changes["location"] = location or None
    if description is not None:
        changes["description"] = description or None
    start = start_time or event.start
    if start_time is not None or end_time is not None:
        end_after_start(start, end_time or event.end)
        if start_time is not None:
            changes["start_time"] = start_time.isoformat()
        if end_time is not None:
            changes["end_time"] = end_time.isoformat()
    if availability_deadline is not None:
        deadline = availability_deadline or None
        changes["availability_deadline"] = deadline.isoformat() if deadline else None
        if deadline is not None:
            deadline_not_after(deadline, start)
    elif event.availability_deadline is not None and start_time is not None:
        _check_kept_deadline(event.availability_deadline, start)
    if invitee_user_ids is not None:
        changes["invitee_user_ids"] = await _invitees(ctx, invitee_user_ids, field="invitee_user_ids")
    if not changes:
        raise ModelRetry("nothing to change: give at least one field to update")
    try:
        return await ctx.deps.require_backends().events.update(event.event_id, **changes)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None


def _check_kept_deadline(deadline: str, start: datetime) -> None:
    """The current deadline must not end up after a moved start."""
    if datetime.fromisoformat(deadline) > start:
        raise ModelRetry(
            f"the new start {start.isoformat()} is before the current availability_deadline {deadline}; "
            "also give an availability_deadline on or before the new start (or empty to remove it)"
        )


@event_server_toolset.tool(metadata=DESTRUCTIVE)
async def invite_to_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    user_ids: Annotated[UserIds, Field(min_length=1, description=_INVITEES)],
) -> InviteResult:
    """Invite more people to an event the current user organizes; people already invited stay as they are."""
    event = await _owned_event(ctx, event_id)
    ids = await _invitees(ctx, user_ids, field="user_ids")
    if not ids:
        raise ModelRetry("the organizer is always part of the event; give the ids of other people to invite")
    already = [i for i in ids if i in event.invitee_user_ids]
    try:
        updated = await ctx.deps.require_backends().events.invite(event.event_id, ids)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    return InviteResult(event=updated, added=[i for i in ids if i not in already], already_invited=already)
