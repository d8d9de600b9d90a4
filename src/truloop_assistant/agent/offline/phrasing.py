"""How the offline model words its answers: tool results (and failures) as sentences."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from pydantic_ai.messages import ToolReturnPart

_KO_DAYS = "월화수목금토일"
_EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
              "October", "November", "December"]  # fmt: skip

_TOOL_ACTIONS = {
    "get_current_datetime": ("현재 시간을 확인하지 못했어요", "I couldn't get the current time"),
    "get_day_of_week": ("요일을 확인하지 못했어요", "I couldn't work out the day of the week"),
    "get_calendar_events": ("캘린더를 확인하지 못했어요", "I couldn't check your calendar"),
    "create_event": ("일정을 만들지 못했어요", "I couldn't create the event"),
    "search_knowledge_base": ("문서를 찾지 못했어요", "I couldn't search the handbook"),
    "search_users": ("사람을 찾지 못했어요", "I couldn't look that person up"),
    "save_memory": ("기억하지 못했어요", "I couldn't remember that"),
    "search_memories": ("기억을 찾지 못했어요", "I couldn't look through what I remember"),
    "search_places": ("장소를 찾지 못했어요", "I couldn't search for places"),
}


def _content(value: Any) -> Any:
    """A tool result as plain JSON-like data (models dumped, JSON strings parsed)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def describe(part: Any, ko: bool, zone: ZoneInfo) -> str:
    """One sentence about a tool result, failure or retry, in the user's language."""
    outcome = part.outcome if isinstance(part, ToolReturnPart) else "retried"
    if outcome == "retried":
        return (
            "죄송해요, 요청을 처리하지 못했어요. 다르게 말씀해 주시겠어요?"
            if ko
            else "Sorry, I couldn't handle that request. Could you put it differently?"
        )
    if outcome == "denied":
        return "알겠어요, 하지 않을게요." if ko else "OK, I won't do that."
    if outcome != "success":
        return _failure(part.tool_name, str(part.content), ko)
    data = _content(part.content)
    if part.tool_name == "get_current_datetime" and isinstance(data, dict):
        return _now_sentence(data, ko)
    if part.tool_name == "get_day_of_week" and isinstance(data, dict):
        if ko:
            return f"{data['date']}은 {data['day_of_week_ko']}이에요."
        return f"{data['date']} is a {data['day_of_week']}."
    if part.tool_name == "get_calendar_events" and isinstance(data, dict):
        return _calendar(data.get("events") or [], ko, zone)
    if phrase := _PHRASES.get(part.tool_name):
        return phrase(data, ko, zone)
    return f"{part.tool_name} 결과: {data}" if ko else f"Result of {part.tool_name}: {data}"


def _now_sentence(data: dict[str, Any], ko: bool) -> str:
    """The current date and time as one sentence."""
    when = datetime.fromisoformat(data["datetime"])
    clock, zone = data["time"], data["timezone"]
    if ko:
        day = f"{when.year}년 {when.month}월 {when.day}일 {data['day_of_week_ko']}"
        return f"지금은 {day} {clock}이에요 ({zone})."
    day = f"{data['day_of_week']}, {when.day} {_EN_MONTHS[when.month - 1]} {when.year}"
    return f"It is {clock} on {day} ({zone})."


def _failure(tool_name: str, text: str, ko: bool) -> str:
    """Explain a failed tool call, quoting the first part of its error."""
    reason = text.split(":", 1)[0].strip() or text
    ko_action, en_action = _TOOL_ACTIONS.get(
        tool_name, (f"{tool_name} 도구를 실행하지 못했어요", f"I couldn't run {tool_name}")
    )
    if "permission" in text.lower():
        calendar = tool_name == "get_calendar_events" or "calendar" in text.lower()
        what_ko, what_en = (
            ("캘린더 권한", "calendar access") if calendar else ("필요한 권한", "the permission")
        )
        hint = (
            f"설정에서 {what_ko}을 허용한 뒤 다시 말씀해 주세요."
            if ko
            else f"Please allow {what_en} in Settings and ask me again."
        )
    elif "not configured" in text:
        return (
            f"{ko_action}: 이 서버에는 그 기능이 설정되어 있지 않아요 (관리자가 API 키를 설정해야 해요)."
            if ko
            else f"{en_action}: that isn't set up on this server (an administrator needs to add its API key)."
        )
    else:
        hint = "잠시 후 다시 시도해 주세요." if ko else "Please try again in a moment."
    return f"{ko_action}: {reason}. {hint}" if ko else f"{en_action}: {reason}. {hint}"


def _parse_time(value: Any, zone: ZoneInfo) -> datetime | None:
    """An event time in the user's zone (naive values are taken as local), or None."""
    raw = value.get("dateTime") if isinstance(value, dict) else value
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        return None
    return parsed.replace(tzinfo=zone) if parsed.tzinfo is None else parsed.astimezone(zone)


def _calendar(events: list[Any], ko: bool, zone: ZoneInfo) -> str:
    """This week's events as a list sorted by start time."""
    if not events:
        return "이번 주에는 캘린더에 일정이 없어요." if ko else "You have nothing in your calendar this week."
    far = datetime.max.replace(tzinfo=UTC)
    rows = [
        (_parse_time(e.get("start"), zone), _parse_time(e.get("end"), zone), e)
        for e in events
        if isinstance(e, dict)
    ]
    rows.sort(key=lambda r: r[0] or far)
    lines = [f"이번 주 일정은 {len(rows)}개예요:" if ko else _en_count(len(rows))]
    for start, end, event in rows:
        title = event.get("title") or ("(제목 없음)" if ko else "(no title)")
        if start is None:
            lines.append(f"- {title}")
            continue
        day = f"{start.month}월 {start.day}일 ({_KO_DAYS[start.weekday()]})" if ko else _en_day(start.date())
        span = f"{start:%H:%M}–{end:%H:%M}" if end else f"{start:%H:%M}"
        lines.append(f"- {day} {span} {title}")
    return "\n".join(lines)


def _en_count(count: int) -> str:
    """The English heading of the event list."""
    return f"You have {count} event{'s' if count != 1 else ''} this week:"


def _en_day(day: date) -> str:
    """A short English date such as 'Tue 10 Mar'."""
    return f"{_EN_DAYS[day.weekday()][:3]} {day.day} {_EN_MONTHS[day.month - 1][:3]}"


def _created(data: Any, ko: bool, zone: ZoneInfo) -> str:
    event = data.get("event", data) if isinstance(data, dict) else {}
    start, end = _parse_time(event.get("start_time"), zone), _parse_time(event.get("end_time"), zone)
    title = event.get("title", "")
    if start is None:
        return f"일정을 만들었어요: “{title}”." if ko else f"Done: “{title}” is in your events."
    day = f"{start.month}월 {start.day}일 ({_KO_DAYS[start.weekday()]})" if ko else _en_day(start.date())
    span = f"{start:%H:%M}–{end:%H:%M}" if end else f"{start:%H:%M}"
    return f"일정을 만들었어요: “{title}” {day} {span}." if ko else f"Done: “{title}” on {day}, {span}."


def _knowledge(data: Any, ko: bool, zone: ZoneInfo) -> str:
    hits = data.get("results", []) if isinstance(data, dict) else []
    if not hits:
        return (
            "사내 문서에서 관련 내용을 찾지 못했어요."
            if ko
            else "I found nothing about that in the handbook."
        )
    top = hits[0]
    others = ", ".join(f"‘{h['title']}’" for h in hits[1:])
    if ko:
        more = f" (관련 문서: {others})" if others else ""
        return f"‘{top['title']}’ 문서에 따르면: {top['snippet']}{more}"
    more = f" (see also {others})" if others else ""
    return f"According to ‘{top['title']}’: {top['snippet']}{more}"


def _people(data: Any, ko: bool, zone: ZoneInfo) -> str:
    users = data.get("users", data) if isinstance(data, dict) else data
    if not isinstance(users, list) or not users:
        return "그런 사람을 찾지 못했어요." if ko else "I couldn't find anyone like that."
    lines = []
    for user in users[:5]:
        contact = ", ".join(str(v) for v in (user.get("phone"), user.get("email")) if v)
        groups = "/".join(user.get("groups") or [])
        lines.append(
            f"- {user.get('name')} ({user.get('user_id')}){f' · {groups}' if groups else ''}"
            f"{f' · {contact}' if contact else ''}"
        )
    return ("찾은 사람:\n" if ko else "Here's who I found:\n") + "\n".join(lines)


def _saved(data: Any, ko: bool, zone: ZoneInfo) -> str:
    text = data.get("text", "") if isinstance(data, dict) else str(data)
    return f"기억해 둘게요: {text}" if ko else f"Got it, I'll remember: {text}"


def _memories(data: Any, ko: bool, zone: ZoneInfo) -> str:
    memories = data.get("memories", data) if isinstance(data, dict) else data
    if not isinstance(memories, list) or not memories:
        return "기억하고 있는 게 없어요." if ko else "I don't remember anything about that yet."
    lines = [f"- {m.get('text')}" for m in memories[:5] if isinstance(m, dict)]
    return ("기억하고 있는 것:\n" if ko else "Here's what I remember:\n") + "\n".join(lines)


def _places(data: Any, ko: bool, zone: ZoneInfo) -> str:
    places = data.get("places", data) if isinstance(data, dict) else data
    if not isinstance(places, list) or not places:
        return "찾는 장소가 없어요." if ko else "I found no places for that."
    lines = [
        f"- {p.get('name')} — {p.get('address')}" + (f" (★{p['rating']})" if p.get("rating") else "")
        for p in places[:5]
        if isinstance(p, dict)
    ]
    return ("찾은 장소:\n" if ko else "Places I found:\n") + "\n".join(lines)


_PHRASES = {
    "search_places": _places,
    "create_event": _created,
    "search_knowledge_base": _knowledge,
    "search_users": _people,
    "save_memory": _saved,
    "search_memories": _memories,
}
