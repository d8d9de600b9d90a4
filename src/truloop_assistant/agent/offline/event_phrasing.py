"""How the offline model words results about events: the phone calendar, events made, invitations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from ...i18n import Language
from ...i18n import offline as say
from ...i18n.dates import short_day


def _parse_time(value: Any, zone: ZoneInfo) -> datetime | None:
    """An event time in the user's zone (naive values are taken as local), or None."""
    raw = value.get("dateTime") if isinstance(value, dict) else value
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        return None
    return parsed.replace(tzinfo=zone) if parsed.tzinfo is None else parsed.astimezone(zone)


def _span(start: datetime, end: datetime | None) -> str:
    return f"{start:%H:%M}–{end:%H:%M}" if end else f"{start:%H:%M}"


def calendar_events(events: list[Any], lang: Language, zone: ZoneInfo) -> str:
    """This week's events as a list sorted by start time."""
    if not events:
        return say.NO_EVENTS(lang)
    far = datetime.max.replace(tzinfo=UTC)
    rows = [
        (_parse_time(e.get("start"), zone), _parse_time(e.get("end"), zone), e)
        for e in events
        if isinstance(e, dict)
    ]
    rows.sort(key=lambda r: r[0] or far)
    lines = [say.EVENT_COUNT(lang, count=len(rows), s="s" if len(rows) != 1 else "")]
    for start, end, event in rows:
        title = event.get("title") or say.NO_TITLE(lang)
        if start is None:
            lines.append(f"- {title}")
        else:
            lines.append(f"- {short_day(start.date(), lang)} {_span(start, end)} {title}")
    return "\n".join(lines)


def names(ids: Sequence[str], lang: Language) -> str:
    """``mina, kim`` / ``mina and kim``."""
    ids = [str(i) for i in ids]
    if lang == "ko" or len(ids) < 2:
        return ", ".join(ids)
    return f"{', '.join(ids[:-1])} and {ids[-1]}"


def _moment(value: Any, lang: Language, zone: ZoneInfo) -> str:
    """A date-time as the user reads it: ``12월 10일 (목) 18:00`` / ``Thu 10 Dec 18:00``."""
    when = _parse_time(value, zone)
    return f"{short_day(when.date(), lang)} {when:%H:%M}" if when else str(value)


def _days(values: Sequence[Any], lang: Language) -> str:
    """``2026-12-02``, ``2026-12-03`` as ``12월 2일 (수), 12월 3일 (목)``."""
    shown = []
    for value in values:
        try:
            shown.append(short_day(date.fromisoformat(str(value)), lang))
        except ValueError:
            shown.append(str(value))
    return ", ".join(shown)


def _when(event: dict[str, Any], lang: Language, zone: ZoneInfo) -> str:
    """``11월 27일 (금) 12:00–13:00``, or nothing when the start is unreadable."""
    start, end = _parse_time(event.get("start_time"), zone), _parse_time(event.get("end_time"), zone)
    return f"{short_day(start.date(), lang)} {_span(start, end)}" if start else ""


def event_line(event: dict[str, Any], lang: Language, zone: ZoneInfo) -> str:
    """One event as a list item: ``- 11월 27일 (금) 12:00–13:00 점심``."""
    when = _when(event, lang, zone)
    return f"- {when + ' ' if when else ''}{event.get('title') or say.NO_TITLE(lang)}"


def created(data: Any, lang: Language, zone: ZoneInfo) -> str:
    event = data.get("event", data) if isinstance(data, dict) else {}
    title = event.get("title", "")
    start, end = _parse_time(event.get("start_time"), zone), _parse_time(event.get("end_time"), zone)
    sentences = [
        say.CREATED_AT(lang, title=title, day=short_day(start.date(), lang), span=_span(start, end))
        if start
        else say.CREATED(lang, title=title)
    ]
    if guests := event.get("guest_user_ids"):
        deadline = event.get("availability_deadline")
        by = say.ANSWERS_BY(lang, when=_moment(deadline, lang, zone)) if deadline else ""
        invited = say.GUESTS_INVITED if len(guests) > 1 else say.GUEST_INVITED
        sentences.append(invited(lang, ids=names(guests, lang), by=by))
        invitations = event.get("invitations") or {}
        if missed := [g for g in guests if not _reached(invitations.get(g, "sent"))]:
            sentences.append(say.INVITATION_NOT_DELIVERED(lang, ids=names(missed, lang)))
    return " ".join(sentences)


def _reached(outcome: object) -> bool:
    """An invitation or notice that was sent, or queued to go out by itself."""
    return outcome == "sent" or (isinstance(outcome, str) and outcome.startswith("queued"))


def cancelled(data: Any, lang: Language, zone: ZoneInfo) -> str:
    event = data.get("event", data) if isinstance(data, dict) else {}
    told = (data.get("told") or {}) if isinstance(data, dict) else {}
    title, when = event.get("title", ""), _when(event, lang, zone)
    sentences = [say.CANCELLED_AT(lang, title=title, when=when) if when else say.CANCELLED(lang, title=title)]
    if reached := [p for p, outcome in told.items() if _reached(outcome)]:
        sentences.append(say.TOLD(lang, ids=names(reached, lang)))
    if missed := [p for p, outcome in told.items() if not _reached(outcome)]:
        sentences.append(say.NOT_TOLD(lang, ids=names(missed, lang)))
    if not told:
        sentences.append(say.NOBODY_TO_TELL(lang))
    return " ".join(sentences)


def _invitation(event: dict[str, Any], lang: Language, zone: ZoneInfo) -> str:
    """An event a guest is invited to, on one line: when, what, where, who organizes, their answer."""
    facts = [event_line(event, lang, zone)]
    if event.get("location"):
        facts.append(str(event["location"]))
    if event.get("organizer_name"):
        facts.append(say.ORGANIZED_BY(lang, name=event["organizer_name"]))
    if event.get("availability_deadline"):
        facts.append(say.ANSWER_BY(lang, when=_moment(event["availability_deadline"], lang, zone)))
    if event.get("your_available_dates"):
        facts.append(say.YOUR_DATES(lang, dates=_days(event["your_available_dates"], lang)))
    return " · ".join(facts)


def invitations(data: Any, lang: Language, zone: ZoneInfo) -> str:
    events = [e for e in (data.get("events") or [] if isinstance(data, dict) else []) if isinstance(e, dict)]
    if not events:
        return say.NOT_INVITED(lang)
    lines = "\n".join(_invitation(e, lang, zone) for e in events)
    unanswered = any(not e.get("your_available_dates") for e in events)
    return say.INVITATIONS(lang, lines=lines) + (f"\n{say.TELL_ME_YOUR_DATES(lang)}" if unanswered else "")


def details(data: Any, lang: Language, zone: ZoneInfo) -> str:
    event = data if isinstance(data, dict) else {}
    when = _when(event, lang, zone)
    title = event.get("title") or say.NO_TITLE(lang)
    lines = [say.EVENT_HEADLINE(lang, title=title, when=when) if when else f"“{title}”"]
    for label, key in (
        (say.WHERE, "location"),
        (say.ORGANIZER, "organizer_name"),
        (say.ABOUT, "description"),
    ):
        if event.get(key):
            lines.append(f"{label(lang)}: {event[key]}")
    if event.get("availability_deadline"):
        lines.append(f"{say.DEADLINE(lang)}: {_moment(event['availability_deadline'], lang, zone)}")
    if event.get("guest_user_ids") is not None:  # the organizer's view: everyone's answer
        invited = [*(event.get("invitee_user_ids") or []), *event["guest_user_ids"]]
        answers = event.get("availability") or {}
        lines.append((say.GUESTS_DATES if invited else say.NO_GUESTS)(lang))
        for person in invited:
            dates = answers.get(person)
            lines.append(f"- {person}: {_days(dates, lang) if dates else say.NO_ANSWER_YET(lang)}")
    elif event.get("your_available_dates"):
        lines.append(f"{say.YOUR_DATES_LABEL(lang)}: {_days(event['your_available_dates'], lang)}")
    else:
        lines.append(say.TELL_ME_YOUR_DATES(lang))
    return "\n".join(lines)


def dates_saved(data: Any, lang: Language, zone: ZoneInfo) -> str:
    saved = data if isinstance(data, dict) else {}
    title, dates = saved.get("title", ""), saved.get("available_dates") or []
    if not dates:
        return say.NO_DATES_SAVED(lang, title=title)
    return say.DATES_SAVED(lang, title=title, dates=_days(dates, lang))
