"""Erasing a guest reached by phone, on their request or their organizer's, and forgetting every such
guest a while after their event.

A guest reached by phone is the person ``tel:`` and their number (``protocol.addresses``): what the
server keeps of them is what it keeps of anyone (their conversations by SMS and on their guest page,
erased as :func:`~.erasure.erase_user` erases a person's), plus their place on the events they were
invited to: their number, the dates they gave and their invitation's language. Erasing them takes
them off those events too (cancelled ones included). Their opt-out (STOP) is kept: it is their
choice not to be texted, and Twilio keeps it as well.

Every guest reached by phone also leaves an event ``PHONE_GUEST_RETENTION_S`` after it ends, without
being asked (``runtime.phone_guests``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

import phonenumbers
from redis.asyncio import Redis

from ..errors import OperatorError
from ..protocol.addresses import phone_of, phone_person
from ..services import Services
from ..store import keys
from .erasure import Conversations, Erased, erase_user

if TYPE_CHECKING:
    from ..backends.events import EventStore

log = logging.getLogger(__name__)


class NotAPhoneNumber(OperatorError):
    """What was given to erase is not a phone number one can read."""


def person_of_number(number: str, *, region: str) -> str:
    """The person id of a phone number as people write it (E.164, or in ``region``); raises
    :class:`NotAPhoneNumber`."""
    try:
        parsed = phonenumbers.parse(number, region)
    except phonenumbers.NumberParseException:
        parsed = None
    if parsed is None or not phonenumbers.is_valid_number(parsed):
        raise NotAPhoneNumber(
            f"{number!r} is not a phone number (e.g. +821055501234, or 010-5550-1234 in KR)"
        )
    return phone_person(phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164))


def eraser_of(services: Services) -> Callable[[str], Awaitable[Erased]]:
    """Erases a person from every store of ``services`` that keeps something of them."""
    return partial(
        erase_user,
        redis=services.redis,
        conversations=Conversations(
            store=services.store,
            transcript=services.transcript,
            ledger=services.ledger,
            inbox=services.inbox,
            outbox=services.outbox,
        ),
        memory=services.backends.memory,
        intake=services.intake,
        revocations=services.revocations,
    )


async def erase_guest(services: Services, person: str) -> GuestErased:
    """:func:`erase_phone_guest` with the stores of ``services``."""
    erase = eraser_of(services)

    async def conversations(person: str) -> int:
        return (await erase(person)).channels

    return await erase_phone_guest(
        person, redis=services.redis, events=services.backends.events, erase_person=conversations
    )


@dataclass(frozen=True)
class GuestErased:
    person: str
    events: int
    channels: int


async def erase_phone_guest(
    person: str,
    *,
    redis: Redis,
    events: EventStore,
    erase_person: Callable[[str], Awaitable[int]],
) -> GuestErased:
    """Erase a guest reached by phone: their conversations (``erase_person``: how many channels) and
    their place on every event they were invited to; safe to repeat."""
    if phone_of(person) is None:
        raise NotAPhoneNumber(f"{person!r} is not a guest reached by phone")
    from ..backends.events import EventNotFoundError  # (the API process loads no event store until asked)

    ids = sorted(i.decode() for i in cast(set[bytes], await redis.smembers(keys.invited_events(person))))
    taken = 0
    for event_id in ids:
        try:
            await events.forget_guests(event_id, [person])
            taken += 1
        except EventNotFoundError:
            pass  # gone already
    number = phone_of(person) or ""
    await redis.delete(keys.invited_events(person), keys.sms_failure(number))  # the opt-out stays
    channels = await erase_person(person)
    log.info("erased guest %s: off %d events, %d conversations", person, taken, channels)
    return GuestErased(person=person, events=taken, channels=channels)
