"""Which event a person means, for cancelling one, showing its details or giving a guest's dates,
over one or two steps.

Without the event in the conversation, the offline model looks the events up first
(``get_events`` / ``list_invited_events``) and then, from that result, acts on the one meant
(:func:`follow_up`): its title in the request, else the one the conversation was about, else the
only one. When it cannot tell, it asks, listing the events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponsePart, TextPart, ToolCallPart

from ...i18n import Language, is_korean
from ...i18n import offline as say
from .days import days_in
from .event_phrasing import event_line
from .phrasing import content

_CANCEL = re.compile(
    r"취소\s*(?:해|하|시켜|할|좀|부탁)|취소[.!~]*$|\bcancel\b|\bcall(?:ing)?\s+off\b", re.IGNORECASE
)
_REASON = re.compile(
    r"\b(?:because|since)\s+(?P<en>.+)$|(?:사유|이유)\s*(?:는|은|:|：)?\s*(?P<ko>.+?)(?:\s*(?:이야|야|예요|이에요))?[.!]*$",
    re.IGNORECASE,
)
_AVAILABLE = re.compile(
    r"가능|괜찮|돼|되요|좋아|참석|시간\s*(?:있|돼|되)|비어|"
    r"\b(?:available|free|works?|make it|can do|can come|can attend|i can|good for me|"
    r"(?:is|are|both) fine|fine (?:for|with) me|suits? me)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\?|어떻게|무슨|언제|어디|뭐|몇|\b(?:what|when|where|how|who|which)\b", re.IGNORECASE)
_NEGATED = re.compile(
    r"안\s*(?:돼|되|될)|못\s*(?:가|해|하|와|돼|될|갈|할)|불가|어려워|어렵|힘들|"
    r"\b(?:not|cannot|can't|don't|doesn't|won't|unavailable)\b|n't\b",
    re.IGNORECASE,
)
_DETAILS = re.compile(
    r"자세히|상세|누가\s*(?:답|가능|와|오)|가능하다고|"
    r"\bdetails?\b|\bwho (?:answered|can make it|is coming)\b|\bavailability\b",
    re.IGNORECASE,
)
_ABOUT_AN_EVENT = re.compile(
    r"일정|약속|회의|미팅|모임|점심|저녁|식사|회식|행사|파티|게스트|"
    # "review에": a Korean particle may follow an English word directly
    r"\b(?:event|meeting|lunch|dinner|call|appointment|review|sync|session|interview|standup|party|guests?)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_DETAILS_FILLER = re.compile(
    r"자세히|상세히?|보여\s*줘|알려\s*줘|게스트\S*|가능하다고|가능한|날짜\S*|누가|답\S*|(?<!\S)(?:한|도)(?!\S)|"
    r"\b(?:show|tell|give|me|details?|of|about|with|guests?|guest's|guests'|dates?|each|said|they|can|make|"
    r"who|answered|availability|what|are|is|coming)\b",
    re.IGNORECASE,
)
_HOW_TO = re.compile(r"\bhow (?:do|can|to|does)\b|어떻게|방법", re.IGNORECASE)
_STOP = frozenset("the and with for of to at on in my our your a an".split())
_VAGUE = frozenset(
    """cancel call calling off please the my our a an that this it one event events meeting appointment
    plan plans for me can could would you i we want to upcoming next today tomorrow tonight thing
    actually just now also okay ok sorry oh so then 그냥 아 역시 그럼
    monday tuesday wednesday thursday friday saturday sunday
    그 저 이 그거 그것 이거 저거 일정 약속 회의 미팅 이벤트 좀 해줘 해 줘 주세요 해주세요 부탁해 부탁해요
    다음 이번 주 오늘 내일 모레 거 것 월요일 화요일 수요일 목요일 금요일 토요일 일요일""".split()
)
_PARTICLE = re.compile(r"(?:을|를|은|는|이|가|도|의|에|로|으로)$")
_YEAR = 365
"""How far ahead a cancellation looks for the event (``get_events`` allows up to 366 days)."""

Event = dict[str, Any]


def wants_cancel(text: str) -> bool:
    """Whether the (lowercased) request asks to cancel something (not how cancelling works)."""
    return bool(_CANCEL.search(text)) and not _HOW_TO.search(text)


def wants_details(text: str) -> bool:
    """Whether the (lowercased) request asks about one event's details or its guests' answers."""
    return bool(_DETAILS.search(text) and _ABOUT_AN_EVENT.search(text)) and not _HOW_TO.search(text)


def events_lookup(now: datetime) -> ToolCallPart:
    """First step of a cancellation or an organizer's question about an event: their events from today."""
    start = datetime.combine(now.date(), time(0, 0, 0), tzinfo=now.tzinfo)
    end = datetime.combine(now.date() + timedelta(days=_YEAR), time(23, 59, 59), tzinfo=now.tzinfo)
    return ToolCallPart(
        "get_events",
        {"start_date": start.isoformat(timespec="seconds"), "end_date": end.isoformat(timespec="seconds")},
    )


def available_dates(text: str, now: datetime) -> list[str] | None:
    """The dates a guest says suit them ("12월 2일, 3일 가능해요", "tuesday works"), or None."""
    if not _AVAILABLE.search(text) or _NEGATED.search(text) or _QUESTION.search(text):
        return None
    return [d.isoformat() for d in days_in(text, now.date())] or None


def _reason(text: str, prompt: str) -> tuple[str, str | None]:
    """The request without its reason, and the reason in the user's words (if they gave one)."""
    match = _REASON.search(prompt)
    if match is None:
        return text, None
    reason = (match.group("en") or match.group("ko") or "").strip(" .!")
    return prompt[: match.start()].lower(), reason or None


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if len(w) >= 2 and w not in _STOP]


def _has_word(word: str, text: str) -> bool:
    if is_korean(word):  # Korean words carry particles: "점심을"
        return word in text
    return re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", text) is not None


def _title_score(event: Event, text: str) -> int:
    """How well the request names the event's title (0: not at all)."""
    title = str(event.get("title") or "").lower().strip()
    if title and title in text:
        return 100 + len(title)
    return sum(1 for w in _words(title) if _has_word(w, text))


def _vague(text: str) -> bool:
    """Whether the request names no particular event ("그 회의 취소해줘", "cancel it")."""
    for token in re.findall(r"[^\W\d]+", text.replace("'s", "")):
        bare = _PARTICLE.sub("", token) if is_korean(token) else token
        if token not in _VAGUE and bare not in _VAGUE and not token.startswith("취소"):
            return False
    return True


_NO_START = datetime.max.replace(tzinfo=UTC)


def _start(event: Event) -> datetime | None:
    """The event's start as the tool result gives it (ISO 8601 with an offset); None otherwise."""
    try:
        start = datetime.fromisoformat(str(event.get("start_time") or ""))
    except ValueError:
        return None
    return start if start.tzinfo is not None else None


def _pick(events: Sequence[Event], text: str, recent: Sequence[str], *, vague: bool) -> Event | None:
    """The event the request means: by title, else (when it names none) the one the conversation was
    about, else the only one."""
    if not events:
        return None

    def rank(event: Event) -> tuple[int, int, datetime]:
        mentioned = event.get("event_id") in recent
        return (
            -_title_score(event, text),
            recent.index(event["event_id"]) if mentioned else len(recent),
            _start(event) or _NO_START,
        )

    best = min(events, key=rank)
    if _title_score(best, text) > 0:
        return best
    if not vague:
        return None
    if best.get("event_id") in recent:
        return best
    return events[0] if len(events) == 1 else None


def _on_named_day(events: list[Event], text: str, now: datetime, zone: ZoneInfo) -> list[Event]:
    """The events on the day the request names ("내일 팀 회의"), or all of them."""
    days = days_in(text, now.date())
    if not days:
        return events
    kept = []
    for event in events:
        start = _start(event)
        if start is not None and start.astimezone(zone).date() in days:
            kept.append(event)
    return kept


def _events(data: Any) -> list[Event]:
    events = data.get("events") if isinstance(data, dict) else None
    return [e for e in events or [] if isinstance(e, dict) and e.get("event_id")]


def _successes(messages: Iterable[ModelMessage]) -> list[tuple[str, Any]]:
    """(tool name, result data) of every successful tool call in the history, oldest first."""
    found = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if part.part_kind == "tool-return" and part.outcome == "success":
                    found.append((part.tool_name, content(part.content)))
    return found


def _recent_event_ids(messages: Sequence[ModelMessage]) -> list[str]:
    """Ids of the events the conversation's tool results were about, the latest first."""
    ids: list[str] = []
    for _, data in reversed(_successes(messages)):
        event = data.get("event", data) if isinstance(data, dict) else None
        if (
            isinstance(event, dict)
            and isinstance(event.get("event_id"), str)
            and event["event_id"] not in ids
        ):
            ids.append(event["event_id"])
    return ids


def known_invitations(messages: Sequence[ModelMessage]) -> tuple[list[Event], list[Event]]:
    """Events an invited person has seen in this conversation: all of them (latest view of each), and those
    of the latest look."""
    known: dict[str, Event] = {}
    latest: list[Event] = []
    for tool, data in _successes(messages):
        if tool == "list_invited_events":
            latest = _events(data)
        elif tool == "get_event_details" and isinstance(data, dict) and data.get("event_id"):
            latest = [data]
        else:
            continue
        known.update({e["event_id"]: e for e in latest})
    return list(known.values()), latest


def invitation_meant(known: list[Event], latest: list[Event], text: str) -> Event | None:
    """The invitation an invited person's message is about: named by title, else the only one in view."""
    by_title = _pick(latest + known, text, [], vague=False)
    if by_title is not None:
        return by_title
    if len(latest) == 1:
        return latest[0]
    return known[0] if len(known) == 1 else None


def _lines(events: Sequence[Event], lang: Language, zone: ZoneInfo) -> str:
    return "\n".join(event_line(e, lang, zone) for e in events)


AVAILABILITY_TOOLS = ("update_availability", "update_guest_availability")
"""How an invited person gives their dates: a member's tool, a guest's tool."""


def availability_tool(tools: set[str]) -> str | None:
    """The tool that saves the current person's dates, if they have one."""
    return next((t for t in AVAILABILITY_TOOLS if t in tools), None)


_TOO = re.compile(r"\S도\s*(?:괜찮|가능|돼|되|좋)|\b(?:too|also|as well)\b", re.IGNORECASE)
"""A date given beside those said before ("모레도 괜찮아요", "Friday works too")."""


def save_dates(event: Event, dates: list[str], tool: str, text: str = "") -> ToolCallPart:
    """The person's dates saved: added to what they said before when they say "too", else all of them."""
    given = "add_dates" if _TOO.search(text) else "available_dates"
    return ToolCallPart(tool, {"event_id": event["event_id"], given: dates})


def which_invitation(events: Sequence[Event], lang: Language, now: datetime) -> TextPart:
    return TextPart(say.WHICH_INVITATION(lang, lines=_lines(events, lang, _zone(now))))


def _zone(now: datetime) -> ZoneInfo:
    """The person's zone, which ``now`` is in."""
    return now.tzinfo if isinstance(now.tzinfo, ZoneInfo) else ZoneInfo("UTC")


def follow_up(
    prompt: str,
    results: Sequence[Any],
    history: Sequence[ModelMessage],
    tools: set[str],
    now: datetime,
    lang: Language,
) -> ModelResponsePart | None:
    """The next step after looking the events up for a cancellation, an event's details or a guest's
    dates, or None (then the results are described)."""
    text = prompt.lower().strip()
    found = {
        p.tool_name: content(p.content)
        for p in results
        if p.part_kind == "tool-return" and p.outcome == "success"
    }
    if "get_events" in found and "cancel_event" in tools and wants_cancel(text):
        return _cancel(_events(found["get_events"]), prompt, text, history, now, lang)
    if "get_events" in found and "get_event_details" in tools and wants_details(text):
        return _details(_events(found["get_events"]), text, history, now, lang)
    dates = available_dates(text, now)
    if "list_invited_events" in found and (tool := availability_tool(tools)) and dates:
        events = _events(found["list_invited_events"])
        if not events:
            return TextPart(say.NOT_INVITED_TO_ANSWER(lang))
        meant = invitation_meant(events, events, text)
        return save_dates(meant, dates, tool, text) if meant else which_invitation(events, lang, now)
    return None


def _cancel(
    events: list[Event],
    prompt: str,
    text: str,
    history: Sequence[ModelMessage],
    now: datetime,
    lang: Language,
) -> ModelResponsePart:
    """Cancel the event the request means, or say there is none / ask which."""
    zone = _zone(now)
    if not events:
        return TextPart(say.NOTHING_TO_CANCEL(lang))
    request, reason = _reason(text, prompt.strip())
    candidates = _on_named_day(events, request, now, zone)
    meant = _pick(candidates, request, _recent_event_ids(history), vague=_vague(request))
    if meant is None:
        return TextPart(say.WHICH_TO_CANCEL(lang, lines=_lines(events, lang, zone)))
    args: dict[str, Any] = {"event_id": meant["event_id"]}
    if reason:
        args["reason"] = reason
    return ToolCallPart("cancel_event", args)


def _details(
    events: list[Event], text: str, history: Sequence[ModelMessage], now: datetime, lang: Language
) -> ModelResponsePart:
    """Show the organizer the event they ask about (with their guests' dates), or ask which."""
    zone = _zone(now)
    if not events:
        return TextPart(say.NO_UPCOMING_EVENTS(lang))
    candidates = _on_named_day(events, text, now, zone)
    vague = _vague(_DETAILS_FILLER.sub(" ", text))
    meant = _pick(candidates, text, _recent_event_ids(history), vague=vague)
    if meant is None:
        return TextPart(say.WHICH_EVENT(lang, lines=_lines(events, lang, zone)))
    return ToolCallPart("get_event_details", {"event_id": meant["event_id"]})
