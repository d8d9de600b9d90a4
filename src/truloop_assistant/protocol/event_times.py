"""When an event may take place: its end after its start, at most 14 days long, from the year 2000
on and starting at most two years ahead.

One rule, said once, where both sides of the device protocol read it: the event tools check it
before the confirmation dialog, the dialog's ``edited`` times are checked against it where the
phone's answer arrives (422 otherwise), and the event store refuses what breaks it.
Each problem reads ``where: what to fix``. Times are only compared and subtracted, never converted,
so a time at the edge of the calendar (year 9999 at -14:00, year 1) is a problem, not an error.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

LONGEST = timedelta(days=14)
"""The longest an event may last (a trip, a conference; a longer plan is several events)."""
FURTHEST_AHEAD = timedelta(days=2 * 365 + 1)
"""How far ahead of now an event may start: two years (a leap day included)."""
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
"""Nothing about an event (its start, its deadline) is before this."""


def span_problem(
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    start_field: str = "start_time",
    end_field: str = "end_time",
) -> str | None:
    """Why an event from ``start`` to ``end`` cannot be (what to fix), or None when it can."""
    if end <= start:
        return (
            f"{end_field} {end.isoformat()} is not after {start_field} {start.isoformat()}; "
            "give an end after the start"
        )
    if end - start > LONGEST:
        days = f"{(end - start) / timedelta(days=1):.1f}".removesuffix(".0")
        return (
            f"{start_field} {start.isoformat()} to {end_field} {end.isoformat()} is {days} days; "
            f"an event lasts at most {LONGEST.days} days: give an end within {LONGEST.days} days of "
            "the start, or make several events"
        )
    if start < EARLIEST:
        return f"{start_field} {start.isoformat()} is before the year 2000; give a time from 2000 on"
    if start > now + FURTHEST_AHEAD:
        latest = (now + FURTHEST_AHEAD).date().isoformat()
        return (
            f"{start_field} {start.isoformat()} is more than 2 years ahead; an event starts by "
            f"{latest} at the latest: check the year"
        )
    return None


def deadline_problem(
    deadline: datetime, start: datetime, *, field: str = "availability_deadline"
) -> str | None:
    """Why a deadline for answering cannot be (after the start, or before 2000), or None."""
    if deadline > start:
        return (
            f"{field} {deadline.isoformat()} is after the event starts ({start.isoformat()}); "
            "give a deadline on or before the start"
        )
    if deadline < EARLIEST:
        return f"{field} {deadline.isoformat()} is before the year 2000; give a time from 2000 on"
    return None
