"""A deterministic, rule-based model for keyless development (``TRULOOP_MODEL=offline``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

_KO_DAYS = "월화수목금토일"
_EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
              "October", "November", "December"]  # fmt: skip

_CITIES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.IGNORECASE), zone)
    for p, zone in [
        (r"뉴욕|(?<![a-z])new york(?![a-z])", "America/New_York"),
        (r"런던|(?<![a-z])london(?![a-z])", "Europe/London"),
        (r"도쿄|(?<![a-z])tokyo(?![a-z])", "Asia/Tokyo"),
        (r"파리|(?<![a-z])paris(?![a-z])", "Europe/Paris"),
        (r"로스앤젤레스|(?<![a-z])(?:la|los angeles)(?![a-z])", "America/Los_Angeles"),
        (r"(?<![a-z])utc(?![a-z])", "UTC"),
    ]
]
_ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")

_WEEKDAY_WORDS = ("요일", "day of the week", "what day", "weekday")
_SCHEDULE_WORDS = ("이번 주 일정", "이번주 일정", "일정", "캘린더", "schedule", "calendar", "this week")
_TIME_WORDS = (
    "몇 시",
    "몇시",
    "시간",
    "지금",
    "what time",
    "current time",
    "time is it",
    "time now",
    "time in",
)

_TOOL_ACTIONS = {
    "get_current_datetime": ("현재 시간을 확인하지 못했어요", "I couldn't get the current time"),
    "get_day_of_week": ("요일을 확인하지 못했어요", "I couldn't work out the day of the week"),
    "get_calendar_events": ("캘린더를 확인하지 못했어요", "I couldn't check your calendar"),
}


def build_offline_model(*, timezone: ZoneInfo, clock: Callable[[], datetime] | None = None) -> FunctionModel:
    """Build the offline model; ``clock`` (aware, default now in UTC) decides what "this week" is."""
    now: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))

    def offline(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Answer from the last tool results, or pick a tool (or a capability reply) from the prompt."""
        prompt = _latest_prompt(messages)
        ko = _is_korean(prompt)
        last = messages[-1] if messages else None
        if isinstance(last, ModelRequest):
            results = [
                p for p in last.parts if p.part_kind in ("tool-return", "retry-prompt", "retry-feedback")
            ]
            if results:
                return ModelResponse(parts=[TextPart("\n".join(_describe(p, ko, timezone) for p in results))])
        tools = {t.name for t in info.function_tools}
        return ModelResponse(parts=[_choose(prompt, ko, tools, now().astimezone(timezone))])

    return FunctionModel(offline, model_name="offline")


def _latest_prompt(messages: Sequence[ModelMessage]) -> str:
    """The text of the most recent user prompt in the history."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    content = part.content
                    return (
                        content
                        if isinstance(content, str)
                        else " ".join(c for c in content if isinstance(c, str))
                    )
    return ""


def _is_korean(text: str) -> bool:
    """Whether the text contains Hangul."""
    return bool(_HANGUL.search(text))


def _choose(prompt: str, ko: bool, tools: set[str], now: datetime) -> ModelResponsePart:
    """Pick a tool call from the prompt's intent, or fall back to the capability reply."""
    text = prompt.lower()
    if any(w in text for w in _WEEKDAY_WORDS) and "get_day_of_week" in tools:
        found = _ISO_DATE.search(text)
        return ToolCallPart("get_day_of_week", {"date": found.group()} if found else {})
    if any(w in text for w in _SCHEDULE_WORDS) and "get_calendar_events" in tools:
        monday = now.date() - timedelta(days=now.weekday())
        start = datetime.combine(monday, time(0, 0, 0), tzinfo=now.tzinfo)
        end = datetime.combine(monday + timedelta(days=6), time(23, 59, 59), tzinfo=now.tzinfo)
        note = "캘린더에서 이번 주 일정을 확인하고 있어요…" if ko else "Checking your calendar for this week…"
        args = {
            "notification_message": note,
            "start_date": start.isoformat(timespec="seconds"),
            "end_date": end.isoformat(timespec="seconds"),
        }
        return ToolCallPart("get_calendar_events", args)
    if any(w in text for w in _TIME_WORDS) and "get_current_datetime" in tools:
        zone = next((z for pattern, z in _CITIES if pattern.search(prompt)), None)
        return ToolCallPart("get_current_datetime", {"timezone": zone} if zone else {})
    if ko:
        return TextPart(
            "저는 오프라인 개발용 모델이라 몇 가지 요청만 이해해요: 지금 시간(다른 도시 포함), "
            "날짜의 요일, 이번 주 캘린더 일정을 물어봐 주세요."
        )
    return TextPart(
        "I'm the offline development model, so I only understand a few requests: the current time "
        "(also in other cities), the day of the week of a date, and this week's calendar."
    )


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


def _describe(part: Any, ko: bool, zone: ZoneInfo) -> str:
    """One sentence about a tool result, failure or retry, in the user's language."""
    outcome = part.outcome if isinstance(part, ToolReturnPart) else "retried"
    if outcome == "retried":
        return (
            "죄송해요, 요청을 처리하지 못했어요. 다르게 말씀해 주시겠어요?"
            if ko
            else "Sorry, I couldn't handle that request. Could you put it differently?"
        )
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
