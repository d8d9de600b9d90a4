"""The offline model's rules for lookups: the knowledge base, places (near the user's own, from their
memories), the phone's permissions, the day of the week and the time."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic_ai.messages import ToolCallPart

from ...i18n import offline as say
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
_THEIR_PLACE = re.compile(
    r"사무실|회사|(?<![가-힣])(?:우리\s*)?집|\b(?:the office|my office|home|work)\b", re.IGNORECASE
)
_PERMISSION_ASKED = re.compile(r"권한|허용|\b(?:permission|allowed|access)\b", re.IGNORECASE)
_PERMISSIONS = (
    (re.compile(r"위치|\blocation\b", re.I), "location"),
    (re.compile(r"연락처|\bcontacts?\b", re.I), "contacts.read"),
    (re.compile(r"카메라|\bcamera\b", re.I), "camera"),
    (re.compile(r"알림|\bnotifications?\b", re.I), "notifications"),
    (re.compile(r"사진|\bphotos?\b", re.I), "photos"),
    (re.compile(r"마이크|\bmicrophone\b", re.I), "microphone"),
    (re.compile(r"캘린더|달력|\bcalendar\b", re.I), "calendar.read"),
)


def knowledge(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _KNOWLEDGE_WORDS):
        return None
    return ToolCallPart("search_knowledge_base", {"query": prompt.strip()[:MAX_QUERY_CHARS], "limit": 3})


def places(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _PLACE_WORDS):
        return None
    return ToolCallPart("search_places", {"query": prompt.strip()[:MAX_PLACE_CHARS]})


def near_somewhere_of_theirs(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """Places near "the office" or "home": where that is comes from the user's memories, not a guess."""
    if not any(w in text for w in _PLACE_WORDS) or not (place := _THEIR_PLACE.search(text)):
        return None
    return ToolCallPart("search_memories", {"query": place.group().removeprefix("my ").removeprefix("the ")})


def permission(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """ "Is the app allowed to use my location?": that permission's status on the phone."""
    if not _PERMISSION_ASKED.search(text):
        return None
    name = next((name for pattern, name in _PERMISSIONS if pattern.search(text)), None)
    if name is None:
        return None
    note = say.CHECKING_PERMISSION("ko" if ko else "en")
    return ToolCallPart("get_permission_status", {"notification_message": note, "permission": name})


def weekday(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _WEEKDAY_WORDS):
        return None
    found = _ISO_DATE.search(text)
    return ToolCallPart("get_day_of_week", {"date": found.group()} if found else {})


def clock(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _TIME_WORDS):
        return None
    zone = next((z for pattern, z in _CITIES if pattern.search(prompt)), None)
    return ToolCallPart("get_current_datetime", {"timezone": zone} if zone else {})
