"""How many people an event invites, checked before the confirmation dialog: a call adds at most
``NEW_PER_CALL`` people, an event has at most ``PER_EVENT``, an organizer invites at most
``PER_ORGANIZER_HOUR`` an hour, and each new guest invited by chat user id is a user of the messaging
channel (one read each, nothing made). One person's event must not send the whole app's budget of
messages, nor make a channel for every id a model (or someone quoted to it) made up. A guest invited by
phone number (``tel:``) counts against the same limits; they are no chat user, so nobody is asked.
"""

from __future__ import annotations

import asyncio

from pydantic_ai import ModelRetry, RunContext, ToolFailed

from ..channels.relay import RelayError
from ..protocol.addresses import phone_of
from .agent_deps import AgentDeps
from .invitations import inviter_of, require_inviter

NEW_PER_CALL = 20
"""People one call may add to an event (invitees and guests together)."""
PER_EVENT = 100
"""People one event may invite in all."""
PER_ORGANIZER_HOUR = 100
"""People one organizer's events may invite in an hour (``keys.INVITATIONS_WINDOW_S``)."""
PARALLEL_CHECKS = 5
"""Guests looked up at a time."""


async def check_new_people(
    ctx: RunContext[AgentDeps], new_invitees: list[str], new_guests: list[str], *, invited_before: int = 0
) -> None:
    """Refuse a call that adds too many people (to the call, the event or the organizer's hour), or a
    guest the messaging channel does not know; ``invited_before``: the event's people already."""
    added = len(new_invitees) + len(new_guests)
    if not added:
        return
    if added > NEW_PER_CALL:
        raise ModelRetry(
            f"{added} people in one call: invite at most {NEW_PER_CALL} at a time (ask the user which "
            "to invite first, then invite the rest with invite_to_event)"
        )
    if invited_before + added > PER_EVENT:
        raise ToolFailed(
            f"an event invites at most {PER_EVENT} people; this one has {invited_before} and the call "
            f"adds {added}"
        )
    inviter = inviter_of(ctx.deps)
    lately = 0 if inviter is None else await inviter.invited_lately(ctx.deps.user_id)
    if lately + added > PER_ORGANIZER_HOUR:
        raise ToolFailed(
            f"the user's events invited {lately} people in the last hour, and at most "
            f"{PER_ORGANIZER_HOUR} may be invited an hour: invite these later"
        )
    if chat_guests := [g for g in new_guests if phone_of(g) is None]:
        await _guests_exist(ctx, chat_guests)


async def _guests_exist(ctx: RunContext[AgentDeps], guests: list[str]) -> None:
    inviter = require_inviter(ctx)
    limit = asyncio.Semaphore(PARALLEL_CHECKS)

    async def known(guest: str) -> bool:
        async with limit:
            return await inviter.exists(guest)

    try:
        found = await asyncio.gather(*(known(g) for g in guests))
    except RelayError as exc:
        raise ToolFailed(f"could not check the guests' chat accounts now ({exc}); try again shortly") from exc
    if missing := [g for g, ok in zip(guests, found, strict=True) if not ok]:
        raise ModelRetry(
            f"no chat user has the id {', '.join(repr(m) for m in missing)}: guests are people with the "
            "chat app; check the ids with the user, and leave out those who have no account"
        )
