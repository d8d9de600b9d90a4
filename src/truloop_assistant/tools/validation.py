"""Argument checks shared by tools; their errors tell the model how to fix the call."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic_ai import ModelRetry


def iso_datetime_with_offset(value: str, *, field: str) -> datetime:
    """Parse an ISO 8601 date-time that carries a UTC offset, e.g. ``2026-03-09T00:00:00+09:00``."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ModelRetry(
            f"{field}={value!r} is not an ISO 8601 date-time; use e.g. 2026-03-09T00:00:00+09:00"
        ) from None
    if parsed.tzinfo is None:
        raise ModelRetry(f"{field}={value!r} has no UTC offset; add the user's offset, e.g. {value}+09:00")
    return parsed


def date_range(start: str, end: str, *, max_days: int = 366) -> tuple[datetime, datetime]:
    """Parse a start/end pair and check that it is ordered and not absurdly long."""
    start_dt = iso_datetime_with_offset(start, field="start_date")
    end_dt = iso_datetime_with_offset(end, field="end_date")
    if end_dt < start_dt:
        raise ModelRetry(f"end_date {end} is before start_date {start}; swap them")
    if (end_dt - start_dt).days > max_days:
        raise ModelRetry(f"the range {start} .. {end} is longer than {max_days} days; ask for a shorter one")
    return start_dt, end_dt


def iso_date(value: str, *, field: str = "date") -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ModelRetry(f"{field}={value!r} is not an ISO date; use YYYY-MM-DD, e.g. 2026-03-09") from None


def time_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ModelRetry(
            f"{name!r} is not an IANA time zone; use a name like 'Asia/Seoul', 'UTC' or 'America/New_York'"
        ) from None


def non_blank(value: str, *, field: str) -> str:
    """The value without surrounding spaces; it must not be empty."""
    stripped = value.strip()
    if not stripped:
        raise ModelRetry(f"{field} must not be empty")
    return stripped


def int_in_range(value: int, *, field: str, low: int, high: int) -> int:
    """Check that an integer argument lies within [low, high]."""
    if not low <= value <= high:
        raise ModelRetry(f"{field}={value} is out of range; use a number from {low} to {high}")
    return value


def id_list(values: list[str], *, field: str, max_items: int, min_items: int = 1) -> list[str]:
    """Strip and de-duplicate a list of ids (keeping their order) and check how many there are."""
    ids = list(dict.fromkeys(v.strip() for v in values if v.strip()))
    if len(ids) < min_items:
        raise ModelRetry(f"{field} needs at least {min_items} id(s)")
    if len(ids) > max_items:
        raise ModelRetry(f"{field} has {len(ids)} ids; give at most {max_items} per call")
    return ids


def time_span(
    start: str, end: str, *, start_field: str = "start_time", end_field: str = "end_time"
) -> tuple[datetime, datetime]:
    """Parse a start/end date-time pair with offsets; the end must come after the start."""
    start_dt = iso_datetime_with_offset(start, field=start_field)
    end_dt = iso_datetime_with_offset(end, field=end_field)
    if end_dt <= start_dt:
        raise ModelRetry(f"{end_field} {end} is not after {start_field} {start}; give an end after the start")
    return start_dt, end_dt


def deadline_not_after(deadline: str, start: datetime, *, field: str = "availability_deadline") -> datetime:
    """Parse a deadline date-time with offset that must not fall after ``start``."""
    deadline_dt = iso_datetime_with_offset(deadline, field=field)
    if deadline_dt > start:
        raise ModelRetry(
            f"{field} {deadline} is after the event starts ({start.isoformat()}); "
            "give a deadline on or before the start"
        )
    return deadline_dt


def available_dates(
    values: list[str],
    *,
    today: date,
    last: date | None = None,
    max_items: int = 31,
    field: str = "available_dates",
) -> list[date]:
    """Parse YYYY-MM-DD dates, de-duplicated and sorted, none before ``today`` or after ``last``."""
    dates = sorted({iso_date(v.strip(), field=field) for v in values})
    if len(dates) > max_items:
        raise ModelRetry(f"{field} has {len(dates)} dates; give at most {max_items}")
    past = [d.isoformat() for d in dates if d < today]
    if past:
        raise ModelRetry(
            f"{', '.join(past)} {'is' if len(past) == 1 else 'are'} in the past "
            f"(today is {today.isoformat()}); give only today or later dates"
        )
    if last is not None:
        late = [d.isoformat() for d in dates if d > last]
        if late:
            raise ModelRetry(
                f"{', '.join(late)} {'is' if len(late) == 1 else 'are'} after the last allowed date "
                f"{last.isoformat()}; give dates up to {last.isoformat()}"
            )
    return dates
