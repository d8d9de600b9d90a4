"""How the offline model words its answers: tool results (and failures) as sentences."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from pydantic_ai.messages import ToolReturnPart

from ...i18n import Language, texts
from ...i18n import offline as say
from ...i18n.dates import MONTHS_EN, short_day
from ...protocol.device_methods import DEVICE_METHODS
from ...tools.marks import EDITED
from ..results import REASON_LEAD
from .event_phrasing import calendar_events, cancelled, created, dates_saved, details, invitations


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
        return calendar_events(data.get("events") or [], lang, zone)
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
    device = DEVICE_METHODS.get(tool_name)
    could_not = device.failure if device is not None else say.COULD_NOT.get(tool_name)
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
    "create_event": created,
    "cancel_event": cancelled,
    "list_invited_events": invitations,
    "get_event_details": details,
    "update_guest_availability": dates_saved,
    "update_availability": dates_saved,
    "search_knowledge_base": _knowledge,
    "search_users": _people,
    "save_memory": _saved,
    "search_memories": _memories,
}
