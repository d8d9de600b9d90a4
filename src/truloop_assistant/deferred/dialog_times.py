"""How a confirmation dialog says a time: in the person's zone and language, with the year when it
is not this year or the event ends on another day, and as written when it is no time at all."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from ..i18n import Language
from ..i18n.dates import short_day
from ..i18n.display import isolate


class Reader(Protocol):
    """Who reads the dialog, and when it is written."""

    @property
    def language(self) -> Language: ...
    @property
    def timezone(self) -> ZoneInfo: ...
    @property
    def now(self) -> datetime: ...


def when(start: datetime | None, end: datetime | None, ctx: Reader) -> str:
    """'11월 24일 (화) 10:00–11:00' / 'Tue 24 Nov 10:00–11:00', in the user's zone; with the year
    ('Sun 20 Dec 2026 10:00 – Wed 23 Dec 2026 18:00') when it is not this year or the end is on
    another day, so a wrong year cannot pass unseen."""
    if start is None:
        return ""
    s = start.astimezone(ctx.timezone)
    e = end.astimezone(ctx.timezone) if end is not None else None
    this_year = ctx.now.astimezone(ctx.timezone).year
    over_days = e is not None and e.date() != s.date()
    year = over_days or s.year != this_year

    def day(moment: datetime) -> str:
        return short_day(moment, ctx.language, year=year)

    until = ""
    if e is not None:
        until = f" – {day(e)} {e:%H:%M}" if over_days else f"–{e:%H:%M}"
    return f"{day(s)} {s:%H:%M}{until}"


def moment(value: Any) -> datetime | None:
    """A time argument of the call, parsed (ISO 8601); None when it is not given."""
    return datetime.fromisoformat(str(value)) if value else None


def args_when(args: dict[str, Any], ctx: Reader, start_name: str, end_name: str | None = None) -> str:
    """The time the call gives, in the user's zone; as written when it is not ISO 8601."""
    start, end = args.get(start_name), args.get(end_name) if end_name else None
    try:
        return when(moment(start), moment(end), ctx)
    except (ValueError, OverflowError):  # not ISO 8601, or beyond the calendar in the user's zone
        return as_written(start, end)


def as_written(start: Any, end: Any) -> str:
    if not start:
        return ""
    return f"{isolate(str(start))} – {isolate(str(end))}" if end else isolate(str(start))
