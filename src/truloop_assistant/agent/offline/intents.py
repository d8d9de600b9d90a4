"""What the offline model understands: a user prompt becomes a tool call (or a capability reply)."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from pydantic_ai.messages import ModelResponsePart, TextPart, ToolCallPart

from ...i18n import Language
from ...i18n import offline as say
from ...i18n.dates import WEEKDAYS_KO
from ...tools.arguments import MAX_QUERY_CHARS
from ...tools.places_tools import MAX_PLACE_CHARS

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
_KNOWLEDGE_WORDS = (
    "휴가", "연차", "회의실", "경비", "비용 처리", "정산", "와이파이", "wifi", "wi-fi", "온보딩", "정책",
    "규정", "policy", "policies", "handbook", "vacation", "leave", "meeting room", "expense", "reimburs",
    "onboarding", "how do i", "how to",
)  # fmt: skip

_EVENT_NOUNS = "event|meeting|lunch|dinner|call|appointment|review|sync|session|interview|standup|party"
_PLACE_WORDS = (
    "맛집",
    "카페",
    "식당",
    "근처",
    "restaurant",
    "cafe",
    "coffee",
    "near me",
    "nearby",
    "places to",
)
_CREATE = re.compile(
    r"(일정|약속|회의|미팅|모임).*(잡아|만들어|추가해|등록해|예약해)|"
    rf"\b(create|schedule|set up|book|add|make|plan)\b.*\b({_EVENT_NOUNS})\b",
    re.IGNORECASE,
)
_REMEMBER_KO = re.compile(
    r"^(?:기억해\s*(?:줘|둬|줄래)?\s*[:：,]?\s*(?P<a>.+)|(?P<b>.+?)\s*(?:라고|다고|을|를)?\s*기억해\s*(?:줘|둬|줄래)?[.!]?)$"
)
_REMEMBER_EN = re.compile(r"^(?:please\s+)?remember(?:\s+that)?[:,]?\s+(?P<a>.+)$", re.IGNORECASE)
_RECALL = re.compile(
    r"기억하고 있|기억나|뭘 기억|what do you remember|do you remember|my memories", re.IGNORECASE
)
_RECALL_FILLER = re.compile(
    r"뭘|무엇을|뭐|기억하고|기억나\w*|있어\w*|있는|있니|거|것|\bwhat\b|\bdo\b|\byou\b|\bremember\b|"
    r"\babout\b|\bmy memories\b|[?.!]"
)
_WHO_EN = re.compile(
    r"(?:who is|find|look up|search for|contact (?:info )?(?:for|of)|phone number of|email of)"
    r"\s+@?(?P<q>[\w.\-@+ ]+?)[?.!]*$",
    re.IGNORECASE,
)
_WHO_KO = re.compile(
    r"@?(?P<q>[\w.\-@+]+?)\s*(?:님|씨)?\s*(?:의\s*)?(?:연락처|전화번호|이메일|프로필|누구|찾아)"
)
_MENTION = re.compile(r"@([A-Za-z0-9_.\-]+)")
_QUOTED = re.compile(r"[\"“”'‘’「『](?P<t>[^\"“”'‘’」』]+)[\"“”'‘’」』]")
_KO_TIME = re.compile(
    r"(?P<ampm>오전|오후|아침|저녁|밤)?\s*(?P<h>\d{1,2})\s*시(?:\s*(?P<m>\d{1,2})\s*분|\s*(?P<half>반))?"
)
_EN_TIME = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>am|pm)\b|\bat\s+(?P<h24>\d{1,2}):(?P<m24>\d{2})\b",
    re.IGNORECASE,
)
_EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def choose(prompt: str, lang: Language, tools: set[str], now: datetime) -> ModelResponsePart:
    """Pick a tool call from the prompt's intent, or fall back to the capability reply."""
    text, ko = prompt.lower().strip(), lang == "ko"
    intents = (
        _remember,
        _recall,
        _create_event,
        _places,
        _find_user,
        _weekday,
        _calendar,
        _knowledge,
        _clock,
    )
    for intent in intents:
        call = intent(prompt, text, ko, now)
        if call is not None and call.tool_name in tools:
            return call
    return TextPart(say.CAPABILITIES(lang))


def _remember(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    match = _REMEMBER_EN.match(prompt.strip()) or _REMEMBER_KO.match(prompt.strip())
    if not match:
        return None
    fact = (match.group("a") or match.groupdict().get("b") or "").strip(" .!")
    return ToolCallPart("save_memory", {"text": fact}) if fact else None


def _recall(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not _RECALL.search(text):
        return None
    about = re.sub(_RECALL_FILLER, " ", text).strip()
    return ToolCallPart("search_memories", {"query": " ".join(about.split()) if len(about) > 1 else ""})


def _create_event(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not _CREATE.search(text):
        return None
    day = _event_day(text, now)
    start = datetime.combine(day, _event_time(prompt) or time(10, 0), tzinfo=now.tzinfo)
    args: dict[str, object] = {
        "title": _event_title(prompt, text, ko),
        "start_time": start.isoformat(timespec="seconds"),
        "end_time": (start + timedelta(hours=1)).isoformat(timespec="seconds"),
    }
    if invitees := _MENTION.findall(prompt):
        args["invitee_user_ids"] = invitees
    return ToolCallPart("create_event", args)


def _event_day(text: str, now: datetime) -> date:
    today = now.date()
    if found := _ISO_DATE.search(text):
        return date.fromisoformat(found.group())
    if "모레" in text or "day after tomorrow" in text:
        return today + timedelta(days=2)
    if "오늘" in text or "today" in text or "tonight" in text:
        return today
    for i, name in enumerate(_EN_WEEKDAYS):
        if name in text:
            return _next_weekday(today, i, next_week="next" in text)
    for i, name in enumerate(WEEKDAYS_KO):
        if name in text:
            return _next_weekday(today, i, next_week="다음 주" in text or "다음주" in text)
    return today + timedelta(days=1)


def _next_weekday(today: date, weekday: int, *, next_week: bool) -> date:
    if next_week:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _event_time(prompt: str) -> time | None:
    if match := _EN_TIME.search(prompt):
        if match.group("h24"):
            return time(int(match.group("h24")) % 24, int(match.group("m24")))
        hour = int(match.group("h")) % 12 + (12 if match.group("ampm").lower() == "pm" else 0)
        return time(hour, int(match.group("m") or 0))
    if match := _KO_TIME.search(prompt):
        hour, ampm = int(match.group("h")), match.group("ampm")
        if (ampm in ("오후", "저녁", "밤") and hour < 12) or (ampm is None and 1 <= hour <= 7):
            hour += 12  # "3시" for a meeting means the afternoon
        minute = 30 if match.group("half") else int(match.group("m") or 0)
        return time(hour % 24, minute)
    return None


def _event_title(prompt: str, text: str, ko: bool) -> str:
    if quoted := _QUOTED.search(prompt):
        return quoted.group("t").strip()
    if ko:
        if match := re.search(
            r"(?:에|에는)?\s*(?P<t>[\w\s]{1,20}?)\s*(?:일정|약속)?\s*(?:을|를)?\s*(?:잡아|만들어|추가해|등록해|예약해)",
            prompt,
        ):
            words = [w for w in match.group("t").split() if not _is_time_word(w)]
            if words:
                return " ".join(words)
        return "새 일정"
    if match := re.search(
        r"\b(?:called|titled|named)\s+(?P<t>.+?)(?:\s+(?:tomorrow|today|on|at|next)\b|$)",
        prompt,
        re.IGNORECASE,
    ):
        return match.group("t").strip(" .")
    if match := re.search(
        rf"\b(?:a|an)\s+(?P<t>[\w ]{{1,30}}?(?:{_EVENT_NOUNS}))\b",
        text,
    ):
        return match.group("t").strip().capitalize()
    return "New event"


def _is_time_word(word: str) -> bool:
    return bool(
        re.fullmatch(
            r"(?:오늘|내일|모레|다음\s?주|이번\s?주|오전|오후|아침|저녁|밤|\d{1,2}시(?:\d{1,2}분|반)?에?|[월화수목금토일]요일에?|\d{4}-\d{2}-\d{2}에?)",
            word,
        )
        or word.startswith("@")
    )


def _places(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _PLACE_WORDS):
        return None
    return ToolCallPart("search_places", {"query": prompt.strip()[:MAX_PLACE_CHARS]})


def _find_user(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    match = _WHO_EN.search(prompt.strip()) or _WHO_KO.search(prompt)
    if not match:
        return None
    query = match.group("q").strip()
    return ToolCallPart("search_users", {"query": query}) if query else None


def _weekday(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _WEEKDAY_WORDS):
        return None
    found = _ISO_DATE.search(text)
    return ToolCallPart("get_day_of_week", {"date": found.group()} if found else {})


def _calendar(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _SCHEDULE_WORDS):
        return None
    monday = now.date() - timedelta(days=now.weekday())
    start = datetime.combine(monday, time(0, 0, 0), tzinfo=now.tzinfo)
    end = datetime.combine(monday + timedelta(days=6), time(23, 59, 59), tzinfo=now.tzinfo)
    note = say.CHECKING_CALENDAR("ko" if ko else "en")
    args = {
        "notification_message": note,
        "start_date": start.isoformat(timespec="seconds"),
        "end_date": end.isoformat(timespec="seconds"),
    }
    return ToolCallPart("get_calendar_events", args)


def _knowledge(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _KNOWLEDGE_WORDS):
        return None
    return ToolCallPart("search_knowledge_base", {"query": prompt.strip()[:MAX_QUERY_CHARS], "limit": 3})


def _clock(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _TIME_WORDS):
        return None
    zone = next((z for pattern, z in _CITIES if pattern.search(prompt)), None)
    return ToolCallPart("get_current_datetime", {"timezone": zone} if zone else {})
