"""``truloop-assistant guests erase NUMBER``: erase a guest reached by phone (as
``DELETE /api/v1/admin/guests/{number}`` does)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from redis.exceptions import RedisError

from ..config import Settings
from ..operations.guest_erasure import GuestErased, NotAPhoneNumber, erase_guest, person_of_number


def add_parser(subparsers: Any) -> None:
    """Add the ``guests`` command and its subcommands."""
    guests = subparsers.add_parser("guests", help="guests reached by phone: erase one by number")
    sub = guests.add_subparsers(dest="guests_command", required=True)
    erase = sub.add_parser(
        "erase",
        help="erase a guest reached by phone: their SMS and guest-page conversations, and their place "
        "on every event (number, dates, language); their opt-out stays",
    )
    erase.add_argument(
        "number", metavar="NUMBER", help="in E.164 (+821055501234) or as written in TRULOOP_DEFAULT_REGION"
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a ``guests`` subcommand; 0 on success, 1 with a one-line reason on stderr otherwise."""
    try:
        person = person_of_number(args.number, region=settings.default_region)
        erased = asyncio.run(_erase(settings, person))
    except NotAPhoneNumber as exc:
        print(f"truloop-assistant: {exc}", file=sys.stderr)
        return 1
    except RedisError as exc:
        print(f"truloop-assistant: could not reach Redis: {exc}", file=sys.stderr)
        return 1
    print(f"erased {erased.person}: off {erased.events} events, {erased.channels} conversations")
    return 0


async def _erase(settings: Settings, person: str) -> GuestErased:
    from ..services import Services

    services = Services.create(settings)
    try:
        return await erase_guest(services, person)
    finally:
        await services.aclose()
