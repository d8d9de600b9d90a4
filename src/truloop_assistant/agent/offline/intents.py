"""What the offline model understands: a user prompt becomes a tool call (or a capability reply)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from functools import partial

from pydantic_ai.messages import ModelMessage, ModelResponsePart, TextPart, ToolCallPart

from ...i18n import Language
from ...i18n import offline as say
from ...tools.arguments import MAX_QUERY_CHARS
from ...tools.places_tools import MAX_PLACE_CHARS
from .days import DAY_PHRASE, named_day
from .events import (
    Event,
    availability_tool,
    available_dates,
    events_lookup,
    invitation_meant,
    known_invitations,
    save_dates,
    wants_cancel,
    wants_details,
    which_invitation,
)

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
    r"(일정|약속|회의|미팅|모임|점심|저녁|식사|회식|커피|통화|면담|행사|파티|스터디|리뷰).*"
    r"(잡아|만들어|추가해|등록해|예약해)|"
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
_MENTION = re.compile(r"(?<![\w.])@(?P<id>[A-Za-z0-9_.\-]*[A-Za-z0-9_])")
_ADDRESSEE = re.compile(r"^\s*@[A-Za-z0-9_.\-]+[,:]?\s*")
_GUEST_WORD = r"(?:guests?|게스트|손님)"
_GUEST_BEFORE = re.compile(rf"(?<![a-z]){_GUEST_WORD}(?:\s*(?:분|들|으로|로))?\s*[:：]?\s*$", re.IGNORECASE)
_GUEST_AFTER = re.compile(
    rf"^\s*(?:님|씨)?\s*(?:은|는|을|를|도)?\s*{_GUEST_WORD}(?:으로|로)(?!\s*@)|^\s+as\s+(?:a\s+)?guests?\b",
    re.IGNORECASE,
)
_JOINED = re.compile(r"^\s*(?:,|、|&|\band\b|와|과|이랑|랑|하고|및)?\s*$", re.IGNORECASE)
_DEADLINE = re.compile(
    rf"\b(?:answers?|reply|replies|respond|responses|rsvps?|availability|dates)\b[\w\s]{{0,30}}?"
    rf"\b(?:by|before)\s+(?P<en>{DAY_PHRASE})\b"
    rf"|(?P<ko>{DAY_PHRASE})\s*까지\s*(?:가능한\s*날(?:짜)?\s*(?:을|를)?\s*)?(?:답|응답|회신|알려|받)\S*",
    re.IGNORECASE,
)
_NOON = re.compile(r"\b(?:at\s+)?(?P<w>noon|midday|midnight)\b|(?P<ko>정오|자정)", re.IGNORECASE)
_INVITED = re.compile(
    r"초대\s*(?:받|된|되)|\binvit(?:ed|ations?|es)\b|\bmy events\b|\bwhat events\b", re.IGNORECASE
)
_DETAILS = re.compile(
    r"자세히|상세|어디서|장소|언제|\bdetails?\b|\bwhere is\b|\bwhen is\b|\bmore about\b", re.I
)
_QUOTED = re.compile(r"[\"“”'‘’「『](?P<t>[^\"“”'‘’」』]+)[\"“”'‘’」』]")
_KO_TIME = re.compile(
    r"(?P<ampm>오전|오후|아침|저녁|밤)?\s*(?P<h>\d{1,2})\s*시(?:\s*(?P<m>\d{1,2})\s*분|\s*(?P<half>반))?"
)
_EN_TIME = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>am|pm)\b|\bat\s+(?P<h24>\d{1,2}):(?P<m24>\d{2})\b",
    re.IGNORECASE,
)
_PARTICLES = r"(?:님|씨)?(?:이랑|랑|와|과|하고|은|는|을|를|도|에게|한테)?"
_PARTICLE_AFTER = re.compile(rf"^{_PARTICLES}")


def without_addressee(prompt: str) -> str:
    """The prompt without a mention at its very start: that one addresses the assistant ("@truloop 내일
    점심 잡아줘"), it invites nobody."""
    return _ADDRESSEE.sub("", prompt, count=1)


def choose(
    prompt: str, lang: Language, tools: set[str], now: datetime, history: Sequence[ModelMessage] = ()
) -> ModelResponsePart:
    """Pick a tool call from the prompt's intent, or fall back to the capability reply."""
    whole, prompt = prompt, without_addressee(prompt)
    text, ko = prompt.lower().strip(), lang == "ko"
    known, latest = known_invitations(history)
    if _answers_an_invitation(text, tools, known) and (
        guest_answer := _guest_dates(text, now, tools, known, latest, lang)
    ):
        return guest_answer
    intents = (
        _remember,
        _recall,
        _cancel,
        partial(_organizer_details, tools=tools),
        partial(_invitations, known=known, latest=latest, tools=tools),
        _create_event,
        _near_somewhere_of_theirs,
        _places,
        _my_profile,
        _permission,
        lambda _, text, ko, now: _find_user(whole, text, ko, now),  # "@mina 연락처": mina is asked about
        _weekday,
        _calendar,
        _knowledge,
        _clock,
    )
    for intent in intents:
        call = intent(prompt, text, ko, now)
        if call is not None and call.tool_name in tools:
            return call
    guest = "list_invited_events" in tools and "create_event" not in tools
    return TextPart((say.GUEST_CAPABILITIES if guest else say.CAPABILITIES)(lang))


_FOR_ME = re.compile(
    r"가능해|가능합니다|괜찮아|괜찮습니다|참석\s*(?:가능|할\s*수)|"
    r"\b(?:works? for me|i can make it|i'm available|i am available|i'm free on|good for me|suits? me)\b",
    re.IGNORECASE,
)


def _answers_an_invitation(text: str, tools: set[str], known: list[Event]) -> bool:
    """Whether dates in the message answer an invitation. A guest's always do (it is all they talk
    about); a member's when they have looked at their invitations here, or say the dates work for
    them, and ask for nothing else (a booking, a cancellation, an event's details)."""
    if "get_events" not in tools:
        return True
    if _CREATE.search(text) or wants_cancel(text) or wants_details(text):
        return False
    return bool(known) or bool(_FOR_ME.search(text))


def _guest_dates(
    text: str, now: datetime, tools: set[str], known: list[Event], latest: list[Event], lang: Language
) -> ModelResponsePart | None:
    """An invited person giving their dates: saved for the event in view, or the invitations looked
    up first."""
    if (tool := availability_tool(tools)) is None or not (dates := available_dates(text, now)):
        return None
    if meant := invitation_meant(known, latest, text):
        return save_dates(meant, dates, tool)
    if known:
        return which_invitation(latest or known, lang, now)
    return ToolCallPart("list_invited_events", {}) if "list_invited_events" in tools else None


def _cancel(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    return events_lookup(now) if wants_cancel(text) else None


def _organizer_details(
    prompt: str, text: str, ko: bool, now: datetime, *, tools: set[str]
) -> ToolCallPart | None:
    """An organizer asking about one of their events (who answered, which dates): look it up first."""
    return events_lookup(now) if "get_event_details" in tools and wants_details(text) else None


def _invitations(
    prompt: str,
    text: str,
    ko: bool,
    now: datetime,
    *,
    known: list[Event],
    latest: list[Event],
    tools: set[str],
) -> ToolCallPart | None:
    """What a guest is invited to; one event's details when they ask about the one in view. A member
    (who has every other tool) only when they ask about invitations in so many words."""
    if "list_invited_events" not in tools:
        return None
    if "get_events" in tools:
        return ToolCallPart("list_invited_events", {}) if _INVITED.search(text) else None
    if _DETAILS.search(text) and (meant := invitation_meant(known, latest, text)):
        return ToolCallPart("get_event_details", {"event_id": meant["event_id"]})
    if _INVITED.search(text) or _DETAILS.search(text):
        return ToolCallPart("list_invited_events", {})
    return None


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


def _places(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    if not any(w in text for w in _PLACE_WORDS):
        return None
    return ToolCallPart("search_places", {"query": prompt.strip()[:MAX_PLACE_CHARS]})


_MY_PROFILE = re.compile(
    r"\bmy (?:e-?mail|phone number|number|title|job title|profile|groups?|team|username|employee id)\b|"
    r"(?<![가-힣])(?:내|제)\s*(?:이메일|메일|전화번호|번호|직함|직책|프로필|그룹|팀|아이디)",
    re.IGNORECASE,
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
_THEIR_PLACE = re.compile(
    r"사무실|회사|(?<![가-힣])(?:우리\s*)?집|\b(?:the office|my office|home|work)\b", re.IGNORECASE
)


def _my_profile(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """ "What's my e-mail?": the user's own profile, never a search for them."""
    return ToolCallPart("get_user_profile", {}) if _MY_PROFILE.search(prompt) else None


def _permission(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """ "Is the app allowed to use my location?": that permission's status on the phone."""
    if not _PERMISSION_ASKED.search(text):
        return None
    name = next((name for pattern, name in _PERMISSIONS if pattern.search(text)), None)
    if name is None:
        return None
    note = say.CHECKING_PERMISSION("ko" if ko else "en")
    return ToolCallPart("get_permission_status", {"notification_message": note, "permission": name})


def _near_somewhere_of_theirs(prompt: str, text: str, ko: bool, now: datetime) -> ToolCallPart | None:
    """Places near "the office" or "home": where that is comes from the user's memories, not a guess."""
    if not any(w in text for w in _PLACE_WORDS) or not (place := _THEIR_PLACE.search(text)):
        return None
    return ToolCallPart("search_memories", {"query": place.group().removeprefix("my ").removeprefix("the ")})


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
