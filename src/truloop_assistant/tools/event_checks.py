"""The checks of a change to an event, run before the confirmation dialog (``args_validator``).

An impossible event (the end before the start, longer than 14 days, before 2000 or more than two
years ahead, a deadline after it, an invitee who is not in the directory, a guest who is, a phone
number that is no number, someone else's or a cancelled event) gets no dialog: the model hears what
to fix instead. The tool runs the same checks again when it executes, in case something changed
while the user decided.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, get_args

from pydantic_ai import ModelRetry, RunContext, ToolFailed

from ..backends.events import Event
from ..backends.users import unknown_user_ids
from .agent_deps import AgentDeps
from .invitation_limits import check_new_people
from .invitations import require_inviter
from .phone_numbers import phone_guests, phone_people
from .user_tools import check_users_exist, directory_call
from .validation import deadline_not_after, event_span


async def owned_event(ctx: RunContext[AgentDeps], event_id: str, *, cancelled: bool = False) -> Event:
    """The current user's event; a cancelled one only with ``cancelled`` (a cancellation run again)."""
    event = await ctx.deps.require_backends().events.get(event_id)
    if event is None:
        raise ToolFailed(f"there is no event with id {event_id!r}")
    if event.owner_id != ctx.deps.user_id:
        raise ToolFailed(f"only the organizer can change event {event_id!r}; the current user is not it")
    if event.cancelled_at is not None and not cancelled:
        cancelled_at = event.cancelled_at.isoformat()
        raise ToolFailed(f"event {event_id!r} was cancelled at {cancelled_at}; it cannot change now")
    return event


async def _invitees(ctx: RunContext[AgentDeps], user_ids: list[str], *, field: str) -> list[str]:
    """The invitees without the organizer; all of them must be in the directory."""
    ids = [i for i in user_ids if i != ctx.deps.user_id]
    await check_users_exist(ctx, ids, field=field)
    return ids


async def guests(
    ctx: RunContext[AgentDeps],
    guest_ids: list[str],
    *,
    field: str = "guest_user_ids",
    invitees_field: str = "invitee_user_ids",
) -> list[str]:
    """The guests without the organizer; none may be in the directory, and invitations must be deliverable."""
    ids = [i for i in guest_ids if i != ctx.deps.user_id]
    if not ids:
        return []
    unknown = await directory_call(unknown_user_ids(ctx.deps.require_backends().users, ids))
    if members := [i for i in ids if i not in unknown]:
        raise ModelRetry(
            f"{field}: {', '.join(repr(m) for m in members)} "
            f"{'is' if len(members) == 1 else 'are'} in the directory; put directory users in "
            f"{invitees_field} ({field} are for chat users outside the directory)"
        )
    require_inviter(ctx)
    return ids


async def check_create(
    ctx: RunContext[AgentDeps],
    start_time: datetime,
    end_time: datetime,
    invitee_user_ids: list[str] | None,
    availability_deadline: datetime | None,
    guest_user_ids: list[str] | None = None,
    guest_phone_numbers: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """Every check of a new event (the invitees and guests to store, without the organizer); a
    member's number invites them as an invitee."""
    event_span(start_time, end_time, now=ctx.deps.now())
    if availability_deadline is not None:
        deadline_not_after(availability_deadline, start_time)
    invitees = await _invitees(ctx, invitee_user_ids or [], field="invitee_user_ids")
    new_guests = await guests(ctx, guest_user_ids or [])
    by_phone = await phone_people(ctx, guest_phone_numbers or [], field="guest_phone_numbers")
    invitees = _unique([*invitees, *by_phone.members])
    new_guests = _unique([*new_guests, *by_phone.guests])
    await check_new_people(ctx, invitees, new_guests)
    return invitees, new_guests


def _unique(people: list[str]) -> list[str]:
    return list(dict.fromkeys(people))


async def validate_create(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    await check_create(
        ctx,
        args["start_time"],
        args["end_time"],
        args.get("invitee_user_ids"),
        args.get("availability_deadline"),
        args.get("guest_user_ids"),
        args.get("guest_phone_numbers"),
    )


async def planned_update(
    ctx: RunContext[AgentDeps],
    event_id: str,
    *,
    title: str | None = None,
    start_time: datetime | None = None,
    end_time: datetime | None = None,
    location: str | None = None,
    description: str | None = None,
    availability_deadline: datetime | None = None,
    add_invitee_user_ids: list[str] | None = None,
    remove_invitee_user_ids: list[str] | None = None,
    add_guest_user_ids: list[str] | None = None,
    remove_guest_user_ids: list[str] | None = None,
    add_guest_phone_numbers: list[str] | None = None,
    remove_guest_phone_numbers: list[str] | None = None,
    clear: list[Clearable] | None = None,
) -> tuple[Event, dict[str, Any]]:
    """The event to change and the checked changes (every check of an update)."""
    event = await owned_event(ctx, event_id)
    cleared = set(clear or [])
    given = {"location": location, "description": description, "availability_deadline": availability_deadline}
    if both := [name for name in CLEARABLE if name in cleared and given[name] is not None]:
        raise ModelRetry(f"{', '.join(both)}: given a new value and cleared; do one or the other")
    changes: dict[str, Any] = {name: None for name in CLEARABLE if name in cleared}
    if title is not None:
        changes["title"] = title
    if location is not None:
        changes["location"] = location
    if description is not None:
        changes["description"] = description
    start = start_time or event.start_time
    if start_time is not None and end_time is None:  # moved: it keeps its length
        end_time = start_time + (event.end_time - event.start_time)
    if start_time is not None or end_time is not None:
        event_span(start, end_time or event.end_time, now=ctx.deps.now())
        if start_time is not None:
            changes["start_time"] = start_time
        if end_time is not None:
            changes["end_time"] = end_time
    if availability_deadline is not None:
        changes["availability_deadline"] = availability_deadline
        deadline_not_after(availability_deadline, start)
    elif (
        event.availability_deadline is not None
        and start_time is not None
        and "availability_deadline" not in cleared
    ):
        _check_kept_deadline(event.availability_deadline, start)
    by_phone = await phone_people(ctx, add_guest_phone_numbers or [], field="add_guest_phone_numbers")
    added = await _invitees(ctx, add_invitee_user_ids or [], field="add_invitee_user_ids")
    invitees = _people_after(
        event.invitee_user_ids,
        _unique([*added, *by_phone.members]),
        remove_invitee_user_ids or [],
        field="remove_invitee_user_ids",
    )
    if invitees != event.invitee_user_ids:
        changes["invitee_user_ids"] = invitees
    new_guests = await guests(
        ctx, add_guest_user_ids or [], field="add_guest_user_ids", invitees_field="add_invitee_user_ids"
    )
    guest_ids = _people_after(
        event.guest_user_ids, new_guests, remove_guest_user_ids or [], field="remove_guest_user_ids"
    )
    guest_ids = _people_after(
        guest_ids,
        by_phone.guests,
        await phone_guests(ctx, remove_guest_phone_numbers or [], field="remove_guest_phone_numbers"),
        field="remove_guest_phone_numbers",
    )
    if guest_ids != event.guest_user_ids:
        changes["guest_user_ids"] = guest_ids
    await check_new_people(
        ctx,
        [i for i in invitees if i not in event.invitee_user_ids],
        [g for g in guest_ids if g not in event.guest_user_ids],
        invited_before=len(event.invited),
    )
    if not changes:
        raise ModelRetry("nothing to change: give at least one field to update (people already invited stay)")
    return event, changes


Clearable = Literal["location", "description", "availability_deadline"]
"""A field an update may remove (``clear``)."""
CLEARABLE: tuple[Clearable, ...] = get_args(Clearable)


def _people_after(current: list[str], added: list[str], removed: list[str], *, field: str) -> list[str]:
    """The people invited after an update: ``current`` without ``removed``, then those ``added``."""
    if strangers := [p for p in removed if p not in current]:
        raise ModelRetry(
            f"{field}: {', '.join(repr(p) for p in strangers)} not invited to this event "
            f"(invited: {', '.join(current) or 'nobody'})"
        )
    if both := [p for p in added if p in removed]:
        raise ModelRetry(f"{', '.join(repr(p) for p in both)}: both added and removed; do one or the other")
    kept = [p for p in current if p not in removed]
    return [*kept, *(p for p in added if p not in kept)]


async def validate_update(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    await planned_update(ctx, **args)


def _check_kept_deadline(deadline: datetime, start: datetime) -> None:
    """The current deadline must not end up after a moved start."""
    if deadline > start:
        raise ModelRetry(
            f"the new start {start.isoformat()} is before the current availability_deadline "
            f"{deadline.isoformat()}; "
            "also give an availability_deadline on or before the new start, or clear it"
        )


async def check_invite(
    ctx: RunContext[AgentDeps],
    event_id: str,
    invitee_user_ids: list[str] | None,
    guest_user_ids: list[str] | None,
    guest_phone_numbers: list[str] | None = None,
) -> tuple[Event, list[str], list[str]]:
    """The event, the invitees and the guests to invite (every check of an invitation)."""
    event = await owned_event(ctx, event_id)
    ids = await _invitees(ctx, invitee_user_ids or [], field="invitee_user_ids")
    new_guests = await guests(ctx, guest_user_ids or [], invitees_field="invitee_user_ids")
    by_phone = await phone_people(ctx, guest_phone_numbers or [], field="guest_phone_numbers")
    ids, new_guests = _unique([*ids, *by_phone.members]), _unique([*new_guests, *by_phone.guests])
    if not ids and not new_guests:
        raise ModelRetry(
            "the organizer is always part of the event; give the ids of other people to invite "
            "(invitee_user_ids for directory users, guest_user_ids for chat users outside the directory, "
            "guest_phone_numbers for others)"
        )
    await check_new_people(
        ctx,
        [i for i in ids if i not in event.invitee_user_ids],
        [g for g in new_guests if g not in event.guest_user_ids],
        invited_before=len(event.invited),
    )
    return event, ids, new_guests


async def validate_invite(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    phones = args.get("guest_phone_numbers")
    await check_invite(
        ctx, args["event_id"], args.get("invitee_user_ids"), args.get("guest_user_ids"), phones
    )


async def validate_cancel(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    """Only the organizer cancels, and only an event that still stands."""
    await owned_event(ctx, args["event_id"])
