"""Guests invited by phone number: numbers read as people write them, and whom each one reaches.

A number is taken in E.164 as it is, or as written in the organizer's country: the country of their
own number in the directory when that is written in international form, else the server's default
(``PhoneInvites.default_region``). Only valid numbers count. A number that is a directory member's
invites that member (an invitee); any other is a guest reached by phone, the person
``tel:+821055501234`` (:func:`~..protocol.addresses.phone_person`). Checked before the confirmation
dialog, like every other argument of the event tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import phonenumbers
from pydantic_ai import ModelRetry, RunContext, ToolFailed

from ..backends.users import UserDirectoryError, as_e164
from ..protocol.addresses import phone_person
from .agent_deps import AgentDeps, PhoneInvites
from .invitations import require_inviter
from .user_tools import directory_call

NO_SMS = "inviting guests by phone number needs SMS on this server, which is off; invite chat users by id"


@dataclass(frozen=True)
class ByPhone:
    """Whom the numbers of one call reach."""

    members: list[str] = field(default_factory=list)
    """Directory members whose numbers were given (invited as invitees)."""
    guests: list[str] = field(default_factory=list)
    """Guests reached by phone (``tel:`` and their number)."""


def require_phone_invites(ctx: RunContext[AgentDeps]) -> PhoneInvites:
    """How this server invites by phone, or a failed tool result when it sends no SMS."""
    if ctx.deps.phone_invites is None:
        raise ToolFailed(NO_SMS)
    return ctx.deps.phone_invites


async def organizer_region(ctx: RunContext[AgentDeps], default: str) -> str:
    """The country of the user's own number when the directory has it in international form."""
    try:
        profile = await ctx.deps.require_backends().users.get_profile(ctx.deps.user_id)
    except UserDirectoryError:
        return default  # the default region reads the number all the same
    phone = (profile.phone or "").strip() if profile else ""
    if phone.startswith("+") and (number := as_e164(phone, default)) is not None:
        return phonenumbers.region_code_for_number(phonenumbers.parse(number)) or default
    return default


def _example(region: str) -> str:
    """How a mobile number is written in ``region`` and in E.164, for an error message."""
    sample = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    if sample is None:
        return "E.164, e.g. +821055501234"
    national = phonenumbers.format_number(sample, phonenumbers.PhoneNumberFormat.NATIONAL)
    e164 = phonenumbers.format_number(sample, phonenumbers.PhoneNumberFormat.E164)
    return f"e.g. {national} (as written in {region}) or {e164}"


async def read_numbers(ctx: RunContext[AgentDeps], typed: list[str], *, field: str) -> tuple[list[str], str]:
    """The numbers in E.164, once each in the order given, and the region they were read in; any
    that is no valid number is a retry naming it as typed, with how numbers are written."""
    invites = require_phone_invites(ctx)
    region = await organizer_region(ctx, invites.default_region)
    numbers = {t: as_e164(t, region) for t in typed}
    if bad := [t for t, number in numbers.items() if number is None]:
        raise ModelRetry(
            f"{field}: {', '.join(repr(b) for b in bad)} "
            f"{'is not a valid phone number' if len(bad) == 1 else 'are not valid phone numbers'}; give "
            f"whole numbers, {_example(region)}; ask the user if one is incomplete"
        )
    return list(dict.fromkeys(n for n in numbers.values() if n is not None)), region


async def phone_people(ctx: RunContext[AgentDeps], typed: list[str], *, field: str) -> ByPhone:
    """Whom the numbers invite: members by their number, everyone else as a guest reached by phone
    (never the organizer, whose own number invites nobody)."""
    if not typed:
        return ByPhone()
    numbers, region = await read_numbers(ctx, typed, field=field)
    users = ctx.deps.require_backends().users
    owners = await directory_call(users.phone_owners(numbers, region=region))
    if shared := {n: ids for n, ids in owners.items() if len(ids) > 1}:
        said = "; ".join(f"{n} is the number of {', '.join(ids)}" for n, ids in shared.items())
        raise ModelRetry(f"{field}: {said}; ask the user whom they mean and invite them by user id")
    members = [owners[n][0] for n in numbers if n in owners]
    guests = [phone_person(n) for n in numbers if n not in owners]
    if guests:
        require_inviter(ctx)
    return ByPhone(members=[m for m in members if m != ctx.deps.user_id], guests=guests)


async def phone_guests(ctx: RunContext[AgentDeps], typed: list[str], *, field: str) -> list[str]:
    """The guests these numbers name (``tel:`` people), read as :func:`phone_people` reads them."""
    if not typed:
        return []
    numbers, _ = await read_numbers(ctx, typed, field=field)
    return [phone_person(n) for n in numbers]
