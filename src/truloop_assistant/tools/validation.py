"""Checks that relate several arguments of a call; their errors tell the model how to fix it.

Each argument's own limits are in the tools' signatures (see :mod:`.arguments`), so by the time
these run every value is well-formed.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from pydantic_ai import ModelRetry

from ..protocol.event_times import deadline_problem, span_problem


def moment_range(start: date | datetime, end: date | datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """A date range as two moments, the end exclusive: a plain start date is that day's midnight in
    ``zone``, a plain end date the next day's (so ``2026-12-04`` .. ``2026-12-04`` is that whole day);
    date-times stay as given. Checked as :func:`date_range` checks."""
    first = first_moment(start, zone)
    last = end if isinstance(end, datetime) else first_moment(end + timedelta(days=1), zone)
    if last <= first and not isinstance(end, datetime):  # a whole end day before the start
        raise ModelRetry(f"end_date {end.isoformat()} is before start_date {start.isoformat()}; swap them")
    date_range(first, last)
    return first, last


def first_moment(start: date | datetime, zone: ZoneInfo) -> datetime:
    """A range's start as a moment: a plain date is that day's midnight in ``zone``."""
    return start if isinstance(start, datetime) else datetime.combine(start, time(), tzinfo=zone)


def date_range(start: datetime, end: datetime, *, max_days: int = 366) -> None:
    """``start_date``/``end_date`` must be in order and not absurdly far apart."""
    if end < start:
        raise ModelRetry(f"end_date {end.isoformat()} is before start_date {start.isoformat()}; swap them")
    if (end - start).days > max_days:
        raise ModelRetry(
            f"the range {start.isoformat()} .. {end.isoformat()} is longer than {max_days} days; "
            "ask for a shorter one"
        )


def event_span(start: datetime, end: datetime, *, now: datetime) -> None:
    """An event's time must be one it can have (see :mod:`..protocol.event_times`)."""
    if (problem := span_problem(start, end, now=now)) is not None:
        raise ModelRetry(problem)


def deadline_not_after(deadline: datetime, start: datetime, *, field: str = "availability_deadline") -> None:
    """A deadline for answering must not fall after the event starts (nor before 2000)."""
    if (problem := deadline_problem(deadline, start, field=field)) is not None:
        raise ModelRetry(problem)


def available_dates(
    dates: list[date], *, today: date, last: date | None = None, field: str = "available_dates"
) -> list[date]:
    """The dates de-duplicated and sorted; none may be before ``today`` or after ``last``."""
    days = sorted(set(dates))
    past = [d.isoformat() for d in days if d < today]
    if past:
        raise ModelRetry(
            f"{field}: {', '.join(past)} {'is' if len(past) == 1 else 'are'} in the past "
            f"(today is {today.isoformat()}); give only today or later dates"
        )
    if last is not None:
        late = [d.isoformat() for d in days if d > last]
        if late:
            raise ModelRetry(
                f"{field}: {', '.join(late)} {'is' if len(late) == 1 else 'are'} after the last allowed date "
                f"{last.isoformat()}; give dates up to {last.isoformat()}"
            )
    return days
