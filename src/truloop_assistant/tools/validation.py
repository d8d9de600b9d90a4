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
