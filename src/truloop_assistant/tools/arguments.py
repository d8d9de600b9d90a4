"""Argument types shared by the tools' signatures.

The limits live in the types, so the JSON schema the model is given states them up front, and a
value that breaks one comes back to the model as a retry prompt naming the argument (pydantic-ai
does that before the tool runs). Where pydantic's own message would not say how to fix the call
(a date-time without a UTC offset, a date that is not YYYY-MM-DD, an unknown time zone), a
validator raises ``ValueError`` with a message that does. Checks that relate several arguments or
need stored data stay in the tool bodies and :mod:`.validation`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field, StringConstraints

MAX_USER_IDS = 100
"""Most user ids one call may name."""

MAX_AVAILABLE_DATES = 31
"""Most dates a guest may give for one event."""

MAX_QUERY_CHARS = 1000
"""Longest free-text search query (the user's question, or its key words)."""

_DATETIME_EXAMPLE = "2026-03-09T14:00:00+09:00"


def _unique(values: list[str]) -> list[str]:
    """Drop repeats, keeping the first occurrence of each value in place."""
    return list(dict.fromkeys(values))


def _with_offset(value: Any) -> Any:
    """An ISO 8601 date-time string with a UTC offset, parsed; anything else is a fixable mistake."""
    if isinstance(value, datetime):
        return value
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
    return parsed


def _with_offset_or_none(value: Any) -> Any:
    """Like :func:`_with_offset`; a blank string counts as not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _with_offset(value)


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


def _iso_date_or_none(value: Any) -> Any:
    """Like :func:`_iso_date`; a blank string counts as not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _iso_date(value)


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

OptionalDateTimeWithOffset = Annotated[AwareDatetime | None, BeforeValidator(_with_offset_or_none)]
"""A date-time with offset, or None (a blank string also means None)."""

IsoDate = Annotated[date, BeforeValidator(_iso_date)]
"""A calendar date, YYYY-MM-DD."""

OptionalIsoDate = Annotated[date | None, BeforeValidator(_iso_date_or_none)]
"""A date, or None (a blank string also means None)."""

TimeZoneName = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=64), AfterValidator(_time_zone)
]
"""An IANA time zone name such as 'Asia/Seoul'."""

UserId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
"""A user id: in the directory, or a chat user id."""

UserIds = Annotated[list[UserId], Field(max_length=MAX_USER_IDS), AfterValidator(_unique)]
"""Up to ``MAX_USER_IDS`` user ids; repeats are dropped, the first occurrence keeps its place."""

EventId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^evt_[0-9a-f]{12}$")]
"""The id of an event in the app's store (``evt_`` and 12 hex digits)."""

SearchQuery = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
]
"""A non-empty search text."""
