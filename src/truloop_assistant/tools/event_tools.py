"""Tools for events kept by the app (not the phone's calendar): list, create, change, invite."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, ToolFailed

from ..backends.events import Event, EventNotFoundError
from .deps import AgentDeps
from .marks import DESTRUCTIVE
from .user_tools import check_users_exist
from .validation import (
    date_range,
    deadline_not_after,
    id_list,
    iso_datetime_with_offset,
    non_blank,
    time_span,
)

event_server_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

MAX_INVITEES = 100

EventId = Annotated[str, Field(description="The event's id, e.g. evt_1a2b3c4d5e6f")]
_DEADLINE = "ISO 8601 with UTC offset by which invitees should give their availability; not after the start"


class EventList(BaseModel):
    events: list[Event] = Field(description="The events, sorted by start time")


class InviteResult(BaseModel):
    event: Event
    added: list[str] = Field(description="User ids invited now")
    already_invited: list[str] = Field(description="User ids invited before; nothing changed for them")


async def _owned_event(ctx: RunContext[AgentDeps], event_id: str) -> Event:
    event = await ctx.deps.require_backends().events.get(event_id.strip())
    if event is None:
        raise ToolFailed(f"there is no event with id {event_id!r}")
    if event.owner_id != ctx.deps.user_id:
        raise ToolFailed(f"only the organizer can change event {event_id!r}; the current user is not it")
    return event


async def _invitees(
    ctx: RunContext[AgentDeps], user_ids: list[str], *, field: str = "invitee_user_ids", min_items: int = 0
) -> list[str]:
    """Checked invitee ids: de-duplicated, in the directory, without the organizer."""
    ids = id_list(user_ids, field=field, max_items=MAX_INVITEES, min_items=min_items)
    ids = [i for i in ids if i != ctx.deps.user_id]
    await check_users_exist(ctx, ids, field=field)
    return ids


def _optional(value: str | None) -> str | None:
    """None and blank both mean 'no value'."""
    return (value.strip() or None) if value is not None else None


@event_server_toolset.tool
async def get_events(
    ctx: RunContext[AgentDeps],
    start_date: Annotated[
        str, Field(description="Start, ISO 8601 with UTC offset, e.g. 2026-03-09T00:00:00+09:00")
    ],
    end_date: Annotated[
        str, Field(description="End, ISO 8601 with UTC offset, e.g. 2026-03-15T23:59:59+09:00")
    ],
) -> EventList:
    """List the events the current user organizes in the app between two date-times."""
    start, end = date_range(start_date, end_date)
    events = await ctx.deps.require_backends().events.list_events(ctx.deps.user_id, start, end)
    return EventList(events=events)


@event_server_toolset.tool(metadata=DESTRUCTIVE)
async def create_event(
    ctx: RunContext[AgentDeps],
    title: Annotated[str, Field(description="The event's title")],
    start_time: Annotated[
        str, Field(description="Start, ISO 8601 with UTC offset, e.g. 2026-03-09T14:00:00+09:00")
    ],
    end_time: Annotated[str, Field(description="End, ISO 8601 with UTC offset; after the start")],
    location: str | None = Field(default=None, description="Where it takes place"),
    description: str | None = Field(default=None, description="Details for the invitees"),
    invitee_user_ids: Annotated[
        list[str] | None, Field(description="Directory user ids to invite (find them with search_users)")
    ] = None,
    availability_deadline: str | None = Field(default=None, description=_DEADLINE),
) -> Event:
    """Create an event in the app, organized by the current user, optionally inviting people."""
    name = non_blank(title, field="title")
    start, _ = time_span(start_time, end_time)
    deadline = _optional(availability_deadline)
    if deadline is not None:
        deadline_not_after(deadline, start)
    invitees = await _invitees(ctx, invitee_user_ids or [])
    return await ctx.deps.require_backends().events.create(
        ctx.deps.user_id,
        title=name,
        start_time=start_time.strip(),
        end_time=end_time.strip(),
        location=_optional(location),
        description=_optional(description),
        invitee_user_ids=invitees,
        availability_deadline=deadline,
    )


@event_server_toolset.tool(metadata=DESTRUCTIVE)
async def update_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    title: str | None = Field(default=None, description="New title; omit to keep"),
    start_time: str | None = Field(default=None, description="New start, ISO 8601 with offset; omit to keep"),
    end_time: str | None = Field(default=None, description="New end, ISO 8601 with offset; omit to keep"),
    location: str | None = Field(default=None, description="New location; omit to keep, empty to remove"),
    description: str | None = Field(default=None, description="New details; omit to keep, empty to remove"),
    invitee_user_ids: Annotated[
        list[str] | None,
        Field(
            description="The complete new invitee list, replacing the current one; omit to keep. "
            "To add people use invite_to_event instead"
        ),
    ] = None,
    availability_deadline: str | None = Field(
        default=None, description=_DEADLINE + "; omit to keep, empty to remove"
    ),
) -> Event:
    """Change an event the current user organizes; only the given fields change."""
    event = await _owned_event(ctx, event_id)
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = non_blank(title, field="title")
    if location is not None:
        changes["location"] = _optional(location)
    if description is not None:
        changes["description"] = _optional(description)
    if start_time is not None or end_time is not None:
        start, _ = time_span(start_time or event.start_time, end_time or event.end_time)
        changes["start_time"] = (start_time or event.start_time).strip()
        changes["end_time"] = (end_time or event.end_time).strip()
    else:
        start = event.start
    if availability_deadline is not None:
        changes["availability_deadline"] = _optional(availability_deadline)
    deadline = changes.get("availability_deadline", event.availability_deadline)
    if deadline is not None:
        _check_deadline(deadline, start, kept="availability_deadline" not in changes)
    if invitee_user_ids is not None:
        changes["invitee_user_ids"] = await _invitees(ctx, invitee_user_ids)
    if not changes:
        raise ModelRetry("nothing to change: give at least one field to update")
    try:
        return await ctx.deps.require_backends().events.update(event.event_id, **changes)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None


def _check_deadline(deadline: str, start: datetime, *, kept: bool) -> None:
    """A new deadline must not be after the start; a kept one must not end up after a moved start."""
    if not kept:
        deadline_not_after(deadline, start)
    elif iso_datetime_with_offset(deadline, field="availability_deadline") > start:
        raise ModelRetry(
            f"the new start {start.isoformat()} is before the current availability_deadline {deadline}; "
            "also give an availability_deadline on or before the new start (or empty to remove it)"
        )


@event_server_toolset.tool(metadata=DESTRUCTIVE)
async def invite_to_event(
    ctx: RunContext[AgentDeps],
    event_id: EventId,
    user_ids: Annotated[
        list[str], Field(description="Directory user ids to invite (find them with search_users)")
    ],
) -> InviteResult:
    """Invite more people to an event the current user organizes; people already invited stay as they are."""
    event = await _owned_event(ctx, event_id)
    ids = await _invitees(ctx, user_ids, field="user_ids", min_items=1)
    if not ids:
        raise ModelRetry("the organizer is always part of the event; give the ids of other people to invite")
    already = [i for i in ids if i in event.invitee_user_ids]
    try:
        updated = await ctx.deps.require_backends().events.invite(event.event_id, ids)
    except EventNotFoundError:
        raise ToolFailed(f"there is no event with id {event_id!r}") from None
    return InviteResult(event=updated, added=[i for i in ids if i not in already], already_invited=already)
