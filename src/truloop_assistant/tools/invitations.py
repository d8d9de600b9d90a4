"""Invitations, changes and cancellations the event tools send, each in the invited person's (invitee's
or guest's) 1:1 channel with the assistant; a guest invited by phone number (``tel:``) gets theirs by
text message, with the link to their guest page.

They go through the :class:`~.deps.Inviter` port, once per event and person (the ``dedup_id``), from a
confirmed tool call that itself runs once. One person's failed delivery does not stop the others, nor
undo the change: the tool's result names whom it could not reach, and why. What the channel cannot
take yet (busy or failing), and whoever is not told within ``INLINE_S``, is queued and goes out later
by itself; the result says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from zoneinfo import ZoneInfo

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.messages import UserPromptPart

from ..backends.events import Event
from ..backends.users import UserDirectoryError, UserProfile
from ..i18n import Language, language_of
from ..protocol.addresses import phone_of
from .agent_deps import AgentDeps, Inviter
from .event_messages import as_language, cancellation, change_notice, invitation, sms_invitation, zone_of

log = logging.getLogger(__name__)

MAX_PARALLEL_SENDS = 8
"""People one call tells at a time (each is a channel lookup and a send)."""
INLINE_S = 4.0
"""How long a call tells people itself; those not told by then are queued (well within the tool's own
time limit: an event with many people never times its tool out)."""

SENT = "sent"
QUEUED = "queued: it goes out by itself within a minute"


def inviter_of(deps: AgentDeps) -> Inviter | None:
    """The deps' inviter, when the server set one."""
    return deps.inviter


def require_inviter(ctx: RunContext[AgentDeps]) -> Inviter:
    """The inviter, or a failed tool result (checked before the confirmation dialog)."""
    inviter = inviter_of(ctx.deps)
    if inviter is None:
        raise ToolFailed("inviting guests is not available on this server; invite directory users instead")
    return inviter


def message_language(ctx: RunContext[AgentDeps]) -> Language:
    """The language of the current user's message (the one this turn answers)."""
    if isinstance(ctx.prompt, str):
        return language_of(ctx.prompt)
    for message in reversed(ctx.messages):
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return language_of(part.content)
    return "en"


async def _profile(ctx: RunContext[AgentDeps], user_id: str) -> UserProfile | None:
    try:
        return await ctx.deps.require_backends().users.get_profile(user_id)
    except UserDirectoryError:
        return None  # a name and a time zone are niceties: the message still goes


async def _known_language(inviter: Inviter, user_id: str) -> Language | None:
    try:
        return await inviter.known_language(user_id)
    except Exception:  # the channel lookup failed: the delivery will say so
        log.warning("could not look up the language of %s", user_id, exc_info=True)
        return None


async def invite_languages(ctx: RunContext[AgentDeps], people: list[str]) -> dict[str, str]:
    """Person -> the language to write to them in: theirs if they wrote to the assistant, else the
    user's. Without an inviter (nobody can be written to) the user's."""
    if not people:
        return {}
    inviter, fallback = inviter_of(ctx.deps), message_language(ctx)
    if inviter is None:
        return dict.fromkeys(people, fallback)
    known = await asyncio.gather(*(_known_language(inviter, p) for p in people))
    return {p: language or fallback for p, language in zip(people, known, strict=True)}


async def _deliver_all(
    inviter: Inviter, people: list[str], write: Callable[[str], Awaitable[str]], dedup: str, organizer: str
) -> dict[str, str]:
    """Deliver ``write(person)`` to each person, a few at a time, as told on behalf of ``organizer``:
    person -> 'sent', queued, or why not."""
    limit = asyncio.Semaphore(MAX_PARALLEL_SENDS)
    deadline = time.monotonic() + INLINE_S

    async def one(person: str) -> str:
        async with limit:
            try:
                text = await write(person)
                dedup_id = f"{dedup}:{person}"
                left = deadline - time.monotonic()
                try:
                    if left <= 0:
                        raise TimeoutError
                    async with asyncio.timeout(left):
                        sent = await inviter.deliver_or_queue(
                            person, text, dedup_id=dedup_id, on_behalf_of=organizer
                        )
                except TimeoutError:  # the rest go out from the queue (a repeat shows once: dedup_id)
                    sent = await inviter.queue(person, text, dedup_id=dedup_id, on_behalf_of=organizer)
            except Exception as exc:  # one person's channel must not stop the others
                log.warning("could not deliver %s to %s", dedup, person, exc_info=True)
                return f"not delivered: {str(exc) or type(exc).__name__}"
            return SENT if sent else QUEUED

    return dict(zip(people, await asyncio.gather(*(one(p) for p in people)), strict=True))


Write = Callable[[Event, str, Language, ZoneInfo], str]
"""Writes what a person is told about an event: (event, organizer's name, language, time zone) -> text."""
TextWrite = Callable[[Event, str, Language, ZoneInfo, str, str | None], str]
"""The same by text message: (..., their number, the link to their guest page or None) -> text."""


async def guest_link(ctx: RunContext[AgentDeps], event: Event, person: str) -> str | None:
    """The link to ``person``'s guest page for ``event``, when the server makes them."""
    invites = ctx.deps.phone_invites
    if invites is None or invites.link is None:
        return None
    try:
        return await invites.link(event, person)
    except Exception:  # the invitation still goes: they can answer by reply
        log.warning("could not make a guest page link for %s", event.event_id, exc_info=True)  # no number
        return None


async def _tell(
    ctx: RunContext[AgentDeps],
    event: Event,
    people: list[str],
    write: Write,
    dedup: str,
    *,
    stored_language: bool = False,
    by_text: TextWrite | None = None,
) -> dict[str, str]:
    """Tell each of ``people`` about ``event`` in their 1:1 channel: person -> 'sent' or why not.

    Each in their language (what they last wrote to the assistant in, else the one their invitation
    was in, else the user's; with ``stored_language``, the invitation's, just looked up); an invitee
    in their own time zone, a guest in the organizer's (theirs is not known); with ``by_text``, a
    guest reached by phone is written that way. The organizer is never told about their own event.
    """
    people = [p for p in people if p != event.owner_id]
    if not people:
        return {}
    inviter = inviter_of(ctx.deps)
    if inviter is None:
        return dict.fromkeys(people, "not delivered: messaging people is not available on this server")
    fallback = message_language(ctx)
    owner = await _profile(ctx, event.owner_id)
    organizer = owner.name if owner else event.owner_id

    async def text(person: str) -> str:
        profile = await _profile(ctx, person) if person in event.invitee_user_ids else None
        language = as_language(event.guest_languages.get(person), fallback)
        if not stored_language:
            language = await _known_language(inviter, person) or language
        zone = zone_of(profile, ctx.deps.timezone)
        if by_text is not None and (number := phone_of(person)) is not None:
            return by_text(event, organizer, language, zone, number, await guest_link(ctx, event, person))
        return write(event, organizer, language, zone)

    return await _deliver_all(inviter, people, text, dedup, event.owner_id)


async def note_invited(ctx: RunContext[AgentDeps], people: int) -> None:
    """The user's events invited ``people`` more (counted against their hourly allowance)."""
    if (inviter := inviter_of(ctx.deps)) is not None:
        await inviter.note_invited(ctx.deps.user_id, people)


async def invite_people(ctx: RunContext[AgentDeps], event: Event, people: list[str]) -> dict[str, str]:
    """Send each of ``people`` (invitees and guests) their invitation: person -> 'sent' or why not."""

    def write(event: Event, organizer: str, language: Language, zone: ZoneInfo) -> str:
        return invitation(event, organizer=organizer, language=language, zone=zone)

    def by_text(
        event: Event, organizer: str, language: Language, zone: ZoneInfo, number: str, link: str | None
    ) -> str:
        return sms_invitation(
            event, organizer=organizer, language=language, zone=zone, number=number, link=link
        )

    dedup = f"invite:{event.event_id}"
    return await _tell(ctx, event, people, write, dedup, stored_language=True, by_text=by_text)


NOTICEABLE = ("title", "start_time", "end_time", "location", "availability_deadline")
"""What invited people are told about when it changes."""


async def tell_changed(ctx: RunContext[AgentDeps], before: Event, after: Event) -> dict[str, str]:
    """Tell everyone invited before and still invited what changed: person -> 'sent' or why not."""
    changed = [field for field in NOTICEABLE if getattr(before, field) != getattr(after, field)]
    if not changed:
        return {}
    people = [p for p in after.invited if before.is_invited(p)]

    def write(event: Event, organizer: str, language: Language, zone: ZoneInfo) -> str:
        return change_notice(event, organizer=organizer, language=language, zone=zone)

    return await _tell(ctx, after, people, write, f"change:{after.event_id}:{after.updated_at.isoformat()}")


async def tell_cancelled(ctx: RunContext[AgentDeps], event: Event) -> dict[str, str]:
    """Tell every invitee and guest that ``event`` was cancelled: person -> 'sent' or why not."""

    def write(event: Event, organizer: str, language: Language, zone: ZoneInfo) -> str:
        return cancellation(event, organizer=organizer, language=language, zone=zone)

    return await _tell(ctx, event, event.invited, write, f"cancel:{event.event_id}")
