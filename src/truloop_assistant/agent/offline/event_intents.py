"""The offline model's rules for an organizer's events: creating one (its day, time, title, invitees
and guests), cancelling one, asking about one, and the week's calendar on the phone."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from pydantic_ai.messages import ToolCallPart

from ...i18n import offline as say
from .days import DAY_PHRASE, named_day
from .events import events_lookup, wants_cancel, wants_details

_EVENT_NOUNS = "event|meeting|lunch|dinner|call|appointment|review|sync|session|interview|standup|party"
_CREATE = re.compile(
    r"(일정|약속|회의|미팅|모임|점심|저녁|식사|회식|커피|통화|면담|행사|파티|스터디|리뷰).*"
    r"(잡아|만들어|추가해|등록해|예약해)|"
    rf"\b(create|schedule|set up|book|add|make|plan)\b.*\b({_EVENT_NOUNS})\b",
    re.IGNORECASE,
)
_DEADLINE = re.compile(
    rf"\b(?:answers?|reply|replies|respond|responses|rsvps?|availability|dates)\b[\w\s]{{0,30}}?"
    rf"\b(?:by|before)\s+(?P<en>{DAY_PHRASE})\b"
    rf"|(?P<ko>{DAY_PHRASE})\s*까지\s*(?:가능한\s*날(?:짜)?\s*(?:을|를)?\s*)?(?:답|응답|회신|알려|받)\S*",
    re.IGNORECASE,
)
_NOON = re.compile(r"\b(?:at\s+)?(?P<w>noon|midday|midnight)\b|(?P<ko>정오|자정)", re.IGNORECASE)
_KO_TIME = re.compile(
    r"(?P<ampm>오전|오후|아침|저녁|밤)?\s*(?P<h>\d{1,2})\s*시(?:\s*(?P<m>\d{1,2})\s*분|\s*(?P<half>반))?"
)
_EN_TIME = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>am|pm)\b|\bat\s+(?P<h24>\d{1,2}):(?P<m24>\d{2})\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"“”'‘’「『](?P<t>[^\"“”'‘’」』]+)[\"“”'‘’」』]")
_MENTION = re.compile(r"(?<![\w.])@(?P<id>[A-Za-z0-9_.\-]*[A-Za-z0-9_])")
_GUEST_WORD = r"(?:guests?|게스트|손님)"
_GUEST_BEFORE = re.compile(rf"(?<![a-z]){_GUEST_WORD}(?:\s*(?:분|들|으로|로))?\s*[:：]?\s*$", re.IGNORECASE)
_GUEST_AFTER = re.compile(
    rf"^\s*(?:님|씨)?\s*(?:은|는|을|를|도)?\s*{_GUEST_WORD}(?:으로|로)(?!\s*@)|^\s+as\s+(?:a\s+)?guests?\b",
    re.IGNORECASE,
)
_JOINED = re.compile(r"^\s*(?:,|、|&|\band\b|와|과|이랑|랑|하고|및)?\s*$", re.IGNORECASE)
_PARTICLES = r"(?:님|씨)?(?:이랑|랑|와|과|하고|은|는|을|를|도|에게|한테)?"
_PARTICLE_AFTER = re.compile(rf"^{_PARTICLES}")
_SCHEDULE_WORDS = ("이번 주 일정", "이번주 일정", "일정", "캘린더", "schedule", "calendar", "this week")


def cancel(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    return events_lookup(now) if wants_cancel(text) else None


def organizer_details(
    prompt: str, text: str, ko: bool, now: datetime, *, tools: set[str]
) -> ToolCallPart | None:
    """An organizer asking about one of their events (who answered, which dates): look it up first."""
    return events_lookup(now) if "get_event_details" in tools and wants_details(text) else None


def create_event(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not _CREATE.search(text):
        return None
    deadline_day, prompt = _deadline(prompt, now.date())
    text = prompt.lower().strip()
    day = named_day(text, now.date()) or now.date() + timedelta(days=1)
    start = datetime.combine(day, _event_time(prompt) or time(10, 0), tzinfo=now.tzinfo)
    cleaned = _without_people(prompt)
    args: dict[str, object] = {
        "title": _event_title(cleaned, cleaned.lower().strip(), ko),
        "start_time": start.isoformat(timespec="seconds"),
        "end_time": (start + timedelta(hours=1)).isoformat(timespec="seconds"),
    }
    invitees, guests = _people(prompt)
    if invitees:
        args["invitee_user_ids"] = invitees
    if guests:
        args["guest_user_ids"] = guests
    if deadline_day is not None:
        deadline = datetime.combine(deadline_day, time(23, 59, 59), tzinfo=now.tzinfo)
        args["availability_deadline"] = min(deadline, start).isoformat(timespec="seconds")
    return ToolCallPart("create_event", args)


def _deadline(prompt: str, today: date) -> tuple[date | None, str]:
    """The day guests should answer by ("answers by friday", "금요일까지 답"), and the prompt without it."""
    match = _DEADLINE.search(prompt)
    if match is None:
        return None, prompt
    day = named_day((match.group("en") or match.group("ko")).lower(), today)
    rest = f"{prompt[: match.start()]} {prompt[match.end() :]}"
    return (day if day is not None and day >= today else None), rest


def _people(prompt: str) -> tuple[list[str], list[str]]:
    """The mentioned invitees and guests: "guest @kim", "게스트 @kim @lee", "@kim은 게스트로" are guests."""
    invitees: list[str] = []
    guests: list[str] = []
    previous_end, in_guests = 0, False
    for match in _MENTION.finditer(prompt):
        before, after = prompt[previous_end : match.start()], prompt[match.end() :]
        if _GUEST_BEFORE.search(before) or (in_guests and _JOINED.match(_PARTICLE_AFTER.sub("", before))):
            in_guests = True
        else:
            in_guests = False
        (guests if in_guests or _GUEST_AFTER.match(after) else invitees).append(match.group("id"))
        previous_end = match.end()
    guests = list(dict.fromkeys(guests))
    return [i for i in dict.fromkeys(invitees) if i not in guests], guests


def _without_people(prompt: str) -> str:
    """The prompt without mentions and the words marking guests, for reading the title."""
    return re.sub(
        rf"(?:(?<![a-z]){_GUEST_WORD}(?:\s*(?:분|들))?\s*)?@[A-Za-z0-9_.\-]+{_PARTICLES}",
        " ",
        prompt,
        flags=re.IGNORECASE,
    )


def _event_time(prompt: str) -> time | None:
    if match := _NOON.search(prompt):
        return (
            time(0, 0)
            if (match.group("w") or match.group("ko")).lower() in ("midnight", "자정")
            else time(12, 0)
        )
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
            r"(?:에|에는)?\s*(?<!\w)(?P<t>[\w\s]{1,20}?)\s*(?:일정|약속)?\s*(?:을|를)?\s*(?:잡아|만들어|추가해|등록해|예약해)",
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
        rf"\b(?:a|an)\s+(?P<t>[\w ]{{0,30}}?(?:{_EVENT_NOUNS}))\b",
        text,
    ):
        return match.group("t").strip().capitalize()
    return "New event"


def _is_time_word(word: str) -> bool:
    return bool(
        re.fullmatch(
            r"(?:오늘|내일|모레|다음|이번|주|다음\s?주|이번\s?주|오전|오후|아침|저녁|밤|정오|"
            r"\d{1,2}시(?:\d{1,2}분|반)?에?|\d{1,2}분에?|\d{1,2}월|\d{1,2}일에?|[월화수목금토일]요일에?|"
            r"\d{4}-\d{2}-\d{2}에?|게스트|손님)",
            word,
        )
        or word.startswith("@")
    )


def calendar(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
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


def asks_to_create(text: str) -> bool:
    """Whether the (lowercased) prompt asks for an event to be made."""
    return bool(_CREATE.search(text))
