"""What a guest page shows of an event: its time zones, the days one may pick, and the JSON of it.

The days are counted in the organizer's zone (the directory's, else the one the event's start was
given in): from today up to and including the day of the availability deadline (without one, the
event's day), at most :data:`MAX_PICK_DAYS` of them.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..backends.users import UserDirectoryError
from ..services import Services

if TYPE_CHECKING:
    from ..backends.events import Event

log = logging.getLogger(__name__)

MAX_PICK_DAYS = 60
"""The most days a page offers to pick (and a guest may give)."""


async def organizer_zone(services: Services, event: Event) -> ZoneInfo | None:
    """The organizer's time zone from the directory; None when it has none (or cannot be asked)."""
    try:
        profile = await services.users.get_profile(event.owner_id)
    except UserDirectoryError as exc:
        log.warning("no time zone for %s's guest page: %s", event.event_id, exc)
        return None
    if profile is None or not profile.timezone:
        return None
    try:
        return ZoneInfo(profile.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def day_zone(event: Event, zone: ZoneInfo | None) -> tzinfo:
    """The zone the days are counted in: the organizer's, else the offset of the event's start."""
    found = zone or event.start_time.tzinfo
    assert found is not None  # event times are aware
    return found


def deadline_passed(event: Event, now: datetime) -> bool:
    """Whether the event no longer takes answers: its deadline has passed."""
    deadline = event.availability_deadline
    return deadline is not None and deadline <= now


def pickable(event: Event, zone: tzinfo, now: datetime) -> list[date]:
    """The days a guest may give: none once cancelled or past the deadline."""
    if event.cancelled_at is not None or deadline_passed(event, now):
        return []
    today = now.astimezone(zone).date()
    last_moment = event.availability_deadline or event.start_time
    last = min(last_moment.astimezone(zone).date(), today + timedelta(days=MAX_PICK_DAYS - 1))
    return [today + timedelta(days=n) for n in range((last - today).days + 1)]


def page_view(event: Event, person: str, *, zone: ZoneInfo | None, now: datetime) -> dict[str, Any]:
    """The JSON of ``GET /g/{token}/api``: the event, the days to pick, the person's own."""
    deadline = event.availability_deadline
    counted_in = day_zone(event, zone)
    return {
        "event": {
            "title": event.title,
            "start_time": event.start_time.isoformat(),
            "end_time": event.end_time.isoformat(),
            "location": event.location,
            "availability_deadline": None if deadline is None else deadline.isoformat(),
        },
        "dates": [d.isoformat() for d in pickable(event, counted_in, now)],
        "mine": event.guest_availability.get(person, []),
        "organizer_zone": None if zone is None else zone.key,
        "today": now.astimezone(counted_in).date().isoformat(),
        "language": event.guest_languages.get(person, ""),
        "cancelled": event.cancelled_at is not None,
        "deadline_passed": deadline_passed(event, now),
    }
