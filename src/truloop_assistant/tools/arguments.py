"""Argument types shared by the tools' signatures.

The limits live in the types, so the JSON schema the model is given states them up front, and a
value that breaks one comes back to the model as a retry prompt naming the argument (pydantic-ai
does that before the tool runs). Where pydantic's own message would not say how to fix the call
(a date-time without a UTC offset, a date that is not YYYY-MM-DD, an unknown time zone), a
validator raises ``ValueError`` with a message that does. Checks that relate several arguments or
need stored data stay in the tool bodies and :mod:`.validation`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field, StringConstraints, WithJsonSchema

from ..i18n.display import describe, escaped, hidden_characters

MAX_USER_IDS = 100
"""Most user ids one call may name."""

MAX_AVAILABLE_DATES = 31
"""Most dates a guest may give for one event."""

MAX_QUERY_CHARS = 1000
"""Longest free-text search query (the user's question, or its key words)."""

EARLIEST_MOMENT = datetime(1900, 1, 1, tzinfo=UTC)
"""The earliest date-time an argument may name (any zone, and a year's arithmetic, stay in range)."""
LATEST_MOMENT = datetime(2999, 12, 31, 23, 59, 59, tzinfo=UTC)
"""The latest date-time an argument may name."""

_DATETIME_EXAMPLE = "2026-03-09T14:00:00+09:00"


def _unique(values: list[str]) -> list[str]:
    """Drop repeats, keeping the first occurrence of each value in place."""
    return list(dict.fromkeys(values))


def _with_offset(value: Any) -> Any:
    """An ISO 8601 date-time string with a UTC offset, parsed; anything else is a fixable mistake."""
    if isinstance(value, datetime):
        return _in_range(value)
    if not isinstance(value, str):
        raise ValueError(f"give an ISO 8601 date-time string with a UTC offset, e.g. {_DATETIME_EXAMPLE}")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 date-time; use e.g. {_DATETIME_EXAMPLE}") from None
    if parsed.tzinfo is None:
        raise ValueError(
            f"{value!r} has no UTC offset; add the user's offset, e.g. {parsed.isoformat()}+09:00"
        )
    return _in_range(parsed)


def _in_range(moment: datetime) -> datetime:
    """A moment between :data:`EARLIEST_MOMENT` and :data:`LATEST_MOMENT`.

    Compared, never converted: a time at the very edge of the calendar (year 9999 at -14:00) cannot
    be moved to UTC or to anyone's zone without leaving it.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{moment.isoformat()!r} has no UTC offset; add one, e.g. {_DATETIME_EXAMPLE}")
    if not EARLIEST_MOMENT <= moment <= LATEST_MOMENT:
        raise ValueError(f"{moment.isoformat()!r} is outside the years 1900 to 2999; check the year")
    return moment


def _blank_is_none(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse``, for which None or a blank string is not given (None)."""

    def parsed(value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        return parse(value)

    return parsed


def _iso_date(value: Any) -> Any:
    """A YYYY-MM-DD string, parsed."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(f"{value!r} is not an ISO date; use YYYY-MM-DD, e.g. 2026-03-09")


def _day_or_moment(value: Any) -> Any:
    """A plain date (YYYY-MM-DD: that whole day), or a date-time with a UTC offset."""
    plain = isinstance(value, str) and len(value.strip()) == 10
    if plain or (isinstance(value, date) and not isinstance(value, datetime)):
        return _iso_date(value)
    return _with_offset(value)


def _time_zone(name: str) -> str:
    """An IANA time zone name (blank is let through: it means 'not given')."""
    if name:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"{name!r} is not an IANA time zone; "
                "use a name like 'Asia/Seoul', 'UTC' or 'America/New_York'"
            ) from None
    return name


DateTimeWithOffset = Annotated[AwareDatetime, BeforeValidator(_with_offset)]
"""An ISO 8601 date-time that carries a UTC offset."""

OptionalDateTimeWithOffset = Annotated[AwareDatetime | None, BeforeValidator(_blank_is_none(_with_offset))]
"""A date-time with offset, or None (a blank string also means None)."""

_DAY_OR_MOMENT_SCHEMA = {"type": "string"}  # what it takes is said once, in its tool's description
DayOrMoment = Annotated[
    date | AwareDatetime, BeforeValidator(_day_or_moment), WithJsonSchema(_DAY_OR_MOMENT_SCHEMA)
]
"""The edge of a date range: a plain date (that whole day, in the user's zone) or a date-time with
offset (see :func:`..tools.validation.moment_range`)."""

OptionalDayOrMoment = Annotated[
    date | AwareDatetime | None,
    BeforeValidator(_blank_is_none(_day_or_moment)),
    WithJsonSchema(_DAY_OR_MOMENT_SCHEMA),
]
"""A :data:`DayOrMoment`, or None (a blank string also means None)."""

IsoDate = Annotated[date, BeforeValidator(_iso_date)]
"""A calendar date, YYYY-MM-DD."""

OptionalIsoDate = Annotated[date | None, BeforeValidator(_blank_is_none(_iso_date))]
"""A date, or None (a blank string also means None)."""

TimeZoneName = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=64), AfterValidator(_time_zone)
]
"""An IANA time zone name such as 'Asia/Seoul'."""


def _visible(user_id: str) -> str:
    """A user id in which every character shows: two ids that look the same are the same id."""
    if hidden := hidden_characters(user_id):
        chars = ", ".join(describe(c) for c in hidden)
        raise ValueError(
            f"'{escaped(user_id)}' holds a character that does not show ({chars}), so it would read as "
            "another id; give the id exactly as search_users or the chat shows it, without it"
        )
    return user_id


UserId = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128), AfterValidator(_visible)
]
"""A user id: in the directory, or a chat user id; none of its characters may be invisible
(controls, zero-width and bidi format characters, fillers)."""

UserIds = Annotated[list[UserId], Field(max_length=MAX_USER_IDS), AfterValidator(_unique)]
"""Up to ``MAX_USER_IDS`` user ids; repeats are dropped, the first occurrence keeps its place."""

PhoneNumbers = Annotated[
    list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]],
    Field(max_length=MAX_USER_IDS),
]
"""Up to ``MAX_USER_IDS`` phone numbers as people write them (read by :mod:`.phone_numbers`)."""

EventId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^evt_[0-9a-f]{12}$")]
"""The id of an event in the app's store (``evt_`` and 12 hex digits)."""

SearchQuery = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
]
"""A non-empty search text."""
