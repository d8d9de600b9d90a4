"""How the offline model words its answers: tool results (and failures) as sentences."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from pydantic_ai.messages import ToolReturnPart

from ...i18n import Language, texts
from ...i18n import offline as say
from ...i18n.dates import MONTHS_EN, short_day
from ...tools.marks import EDITED
from ..results import REASON_LEAD


def content(value: Any) -> Any:
    """A tool result as plain JSON-like data (models dumped, JSON strings parsed)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def describe(part: Any, lang: Language, zone: ZoneInfo) -> str:
    """One sentence about a tool result, failure or retry, in the user's language."""
    outcome = part.outcome if isinstance(part, ToolReturnPart) else "retried"
    if outcome == "retried":
        return _retried(str(part.content), lang)
    if outcome == "denied":
        if reason := re.search(re.escape(REASON_LEAD) + r"“(.*)”\Z", str(part.content), re.DOTALL):
            return say.DENIED_BECAUSE(lang, reason=reason.group(1))
        return say.DENIED(lang)
    if outcome != "success":
        return _failure(part.tool_name, str(part.content), lang)
    data = content(part.content)
    if isinstance(data, dict) and isinstance(edited := data.get(EDITED), dict):
        # The person changed the call in its dialog: say so, then what was done.
        fields = ", ".join(_FIELD_LABELS[n](lang) if n in _FIELD_LABELS else n for n in edited)
        rest = {k: v for k, v in data.items() if k not in (EDITED, "note")}
        return say.EDITED(lang, fields=fields) + _success(part.tool_name, rest, lang, zone)
    return _success(part.tool_name, data, lang, zone)


_FIELD_LABELS = {
    "title": texts.FIELD_TITLE,
    "start_time": texts.FIELD_START,
    "end_time": texts.FIELD_END,
    "location": texts.FIELD_LOCATION,
}
"""How the dialog named the fields a person may change (``deferred.approvals``)."""


def _success(tool_name: str, data: Any, lang: Language, zone: ZoneInfo) -> str:
    """One sentence about what a tool gave back."""
    if tool_name == "get_current_datetime" and isinstance(data, dict):
        return _now_sentence(data, lang)
    if tool_name == "get_day_of_week" and isinstance(data, dict):
        return say.WEEKDAY_OF(
            lang, date=data["date"], weekday=data["day_of_week"], weekday_ko=data["day_of_week_ko"]
        )
    if tool_name == "get_calendar_events" and isinstance(data, dict):
        return _calendar(data.get("events") or [], lang, zone)
    if phrase := _PHRASES.get(tool_name):
        return phrase(data, lang, zone)
    shown = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return say.RESULT(lang, tool=tool_name, data=shown)


def _now_sentence(data: dict[str, Any], lang: Language) -> str:
    """The current date and time as one sentence."""
    when = datetime.fromisoformat(data["datetime"])
    if lang == "ko":
        day = f"{when.year}년 {when.month}월 {when.day}일 {data['day_of_week_ko']}"
    else:
        day = f"{data['day_of_week']}, {when.day} {MONTHS_EN[when.month - 1]} {when.year}"
    return say.NOW(lang, day=day, clock=data["time"], zone=data["timezone"])


def _quoted_ids(text: str) -> str:
    """The ``'id'`` names in a check's message, for the user's eyes: ``kim, lee``."""
    return ", ".join(dict.fromkeys(re.findall(r"'([^']+)'", text)))


def _retried(text: str, lang: Language) -> str:
    """A call the tool sent back to be fixed: what the user can change, when it is clear, else an apology."""
    if match := re.search(r"guest_user_ids: (.+?) (?:is|are) in the directory", text):
        return say.GUEST_IN_DIRECTORY(lang, ids=_quoted_ids(match.group(1)))
    if match := re.search(r"after the last allowed date (\d{4}-\d{2}-\d{2})", text):
        return say.DATES_AFTER_DEADLINE(lang, last=short_day(date.fromisoformat(match.group(1)), lang))
    if "available_dates" in text and "in the past" in text:
        return say.DATES_IN_PAST(lang)
    return say.RETRIED(lang)


def _failure(tool_name: str, text: str, lang: Language) -> str:
    """Explain a failed tool call in the user's words: what could not be done and what to do.

    The failure text is written for the model (``Expired: …``, ``PermissionRequired (-32010): …``);
    none of it is quoted to the user.
    """
    could_not = say.COULD_NOT.get(tool_name)
    action = could_not(lang) if could_not else say.COULD_NOT_RUN(lang, tool=tool_name)
    lowered = text.lower()
    if "permission" in lowered:
        calendar = tool_name == "get_calendar_events" or "calendar" in lowered
        return say.NOT_ALLOWED(
            lang, action=action, what=(say.CALENDAR_ACCESS if calendar else say.THE_PERMISSION)(lang)
        )
    if "not configured" in lowered:
        return say.NOT_CONFIGURED(lang, action=action)
    if lowered.startswith("expired"):
        return say.NO_ANSWER_FROM_PHONE(lang, action=action)
    if "timed out" in lowered:
        return say.TOOK_TOO_LONG(lang, action=action)
    if match := re.search(r"no user with id (.+?) in the directory", text):
        ids = _quoted_ids(match.group(1))
        return say.NOT_IN_DIRECTORY(lang, action=action, ids=ids, first=ids.split(", ")[0])
    if "deadline" in lowered and "has passed" in lowered:
        return say.DEADLINE_PASSED(lang, action=action)
    if "was cancelled" in lowered:
        return say.EVENT_CANCELLED(lang, action=action)
    return say.FAILED(lang, action=action, hint=say.TRY_AGAIN(lang))


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


def _calendar(events: list[Any], lang: Language, zone: ZoneInfo) -> str:
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


def _names(ids: Sequence[str], lang: Language) -> str:
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


def _created(data: Any, lang: Language, zone: ZoneInfo) -> str:
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
        sentences.append(invited(lang, ids=_names(guests, lang), by=by))
        invitations = event.get("invitations") or {}
        if missed := [g for g in guests if not _reached(invitations.get(g, "sent"))]:
            sentences.append(say.INVITATION_NOT_DELIVERED(lang, ids=_names(missed, lang)))
    return " ".join(sentences)


def _reached(outcome: object) -> bool:
    """An invitation or notice that was sent, or queued to go out by itself."""
    return outcome == "sent" or (isinstance(outcome, str) and outcome.startswith("queued"))


def _cancelled(data: Any, lang: Language, zone: ZoneInfo) -> str:
    event = data.get("event", data) if isinstance(data, dict) else {}
    told = (data.get("told") or {}) if isinstance(data, dict) else {}
    title, when = event.get("title", ""), _when(event, lang, zone)
    sentences = [say.CANCELLED_AT(lang, title=title, when=when) if when else say.CANCELLED(lang, title=title)]
    if reached := [p for p, outcome in told.items() if _reached(outcome)]:
        sentences.append(say.TOLD(lang, ids=_names(reached, lang)))
    if missed := [p for p, outcome in told.items() if not _reached(outcome)]:
        sentences.append(say.NOT_TOLD(lang, ids=_names(missed, lang)))
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


def _invitations(data: Any, lang: Language, zone: ZoneInfo) -> str:
    events = [e for e in (data.get("events") or [] if isinstance(data, dict) else []) if isinstance(e, dict)]
    if not events:
        return say.NOT_INVITED(lang)
    lines = "\n".join(_invitation(e, lang, zone) for e in events)
    unanswered = any(not e.get("your_available_dates") for e in events)
    return say.INVITATIONS(lang, lines=lines) + (f"\n{say.TELL_ME_YOUR_DATES(lang)}" if unanswered else "")


def _details(data: Any, lang: Language, zone: ZoneInfo) -> str:
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


def _dates_saved(data: Any, lang: Language, zone: ZoneInfo) -> str:
    saved = data if isinstance(data, dict) else {}
    title, dates = saved.get("title", ""), saved.get("available_dates") or []
    if not dates:
        return say.NO_DATES_SAVED(lang, title=title)
    return say.DATES_SAVED(lang, title=title, dates=_days(dates, lang))


def _knowledge(data: Any, lang: Language, zone: ZoneInfo) -> str:
    hits = data.get("results", []) if isinstance(data, dict) else []
    if not hits:
        return say.NOTHING_IN_HANDBOOK(lang)
    top = hits[0]
    others = ", ".join(f"‘{h['title']}’" for h in hits[1:])
    more = say.SEE_ALSO(lang, others=others) if others else ""
    return say.ACCORDING_TO(lang, title=top["title"], snippet=top["snippet"], more=more)


def _people(data: Any, lang: Language, zone: ZoneInfo) -> str:
    users = data.get("users", data) if isinstance(data, dict) else data
    if not isinstance(users, list) or not users:
        return say.NOBODY(lang)
    lines = []
    for user in users[:5]:
        contact = ", ".join(str(v) for v in (user.get("phone"), user.get("email")) if v)
        groups = "/".join(user.get("groups") or [])
        lines.append(
            f"- {user.get('name')} ({user.get('user_id')}){f' · {groups}' if groups else ''}"
            f"{f' · {contact}' if contact else ''}"
        )
    return say.PEOPLE(lang, lines="\n".join(lines))


def _saved(data: Any, lang: Language, zone: ZoneInfo) -> str:
    return say.REMEMBERED(lang, text=data.get("text", "") if isinstance(data, dict) else str(data))


def _memories(data: Any, lang: Language, zone: ZoneInfo) -> str:
    memories = data.get("memories", data) if isinstance(data, dict) else data
    if not isinstance(memories, list) or not memories:
        return say.NO_MEMORIES(lang)
    lines = [f"- {m.get('text')}" for m in memories[:5] if isinstance(m, dict)]
    return say.MEMORIES(lang, lines="\n".join(lines))


def _places(data: Any, lang: Language, zone: ZoneInfo) -> str:
    places = data.get("places", data) if isinstance(data, dict) else data
    if not isinstance(places, list) or not places:
        return say.NO_PLACES(lang)
    lines = [
        f"- {p.get('name')} — {p.get('address')}" + (f" (★{p['rating']})" if p.get("rating") else "")
        for p in places[:5]
        if isinstance(p, dict)
    ]
    return say.PLACES(lang, lines="\n".join(lines))


def _profile(data: Any, lang: Language, zone: ZoneInfo) -> str:
    return _people({"users": [data]} if isinstance(data, dict) else data, lang, zone)


def _permission(data: Any, lang: Language, zone: ZoneInfo) -> str:
    status = data if isinstance(data, dict) else {}
    again = say.PERMISSION_CAN_ASK(lang) if status.get("canPromptAgain") else ""
    return say.PERMISSION_STATUS(lang, status=status.get("status", "?"), again=again) + "."


_PHRASES = {
    "get_user_profile": _profile,
    "get_permission_status": _permission,
    "search_places": _places,
    "create_event": _created,
    "cancel_event": _cancelled,
    "list_invited_events": _invitations,
    "get_event_details": _details,
    "update_guest_availability": _dates_saved,
    "update_availability": _dates_saved,
    "search_knowledge_base": _knowledge,
    "search_users": _people,
    "save_memory": _saved,
    "search_memories": _memories,
}
