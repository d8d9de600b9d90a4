"""The offline model's rules for invitations: a guest giving their dates, and what someone is invited to."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic_ai.messages import ModelResponsePart, ToolCallPart

from ...i18n import Language
from .event_intents import asks_to_create
from .events import (
    Event,
    availability_tool,
    available_dates,
    invitation_meant,
    save_dates,
    wants_cancel,
    wants_details,
    which_invitation,
)

_INVITED = re.compile(
    r"초대\s*(?:받|된|되)|\binvit(?:ed|ations?|es)\b|\bmy events\b|\bwhat events\b", re.IGNORECASE
)
_DETAILS = re.compile(
    r"자세히|상세|어디서|장소|언제|\bdetails?\b|\bwhere is\b|\bwhen is\b|\bmore about\b", re.I
)
_FOR_ME = re.compile(
    r"가능해|가능합니다|괜찮아|괜찮습니다|참석\s*(?:가능|할\s*수)|"
    r"\b(?:works? for me|i can make it|i'm available|i am available|i'm free on|good for me|suits? me)\b",
    re.IGNORECASE,
)


def answers_an_invitation(text: str, tools: set[str], known: list[Event]) -> bool:
    """Whether dates in the message answer an invitation. A guest's always do (it is all they talk
    about); a member's when they have looked at their invitations here, or say the dates work for
    them, and ask for nothing else (a booking, a cancellation, an event's details)."""
    if "get_events" not in tools:
        return True
    if asks_to_create(text) or wants_cancel(text) or wants_details(text):
        return False
    return bool(known) or bool(_FOR_ME.search(text))


def guest_dates(
    text: str, now: datetime, tools: set[str], known: list[Event], latest: list[Event], lang: Language
) -> ModelResponsePart | None:
    """An invited person giving their dates: saved for the event in view, or the invitations looked
    up first."""
    if (tool := availability_tool(tools)) is None or not (dates := available_dates(text, now)):
        return None
    if meant := invitation_meant(known, latest, text):
        return save_dates(meant, dates, tool, text)
    if known:
        return which_invitation(latest or known, lang, now)
    return ToolCallPart("list_invited_events", {}) if "list_invited_events" in tools else None


def invitations(
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
