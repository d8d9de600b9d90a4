"""What the offline model understands: a user prompt becomes a tool call (or a capability reply).

The rules live by family beside this module (events, invitations, people, lookups); :func:`choose`
tries them in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from pydantic_ai.messages import ModelMessage, ModelResponsePart, TextPart

from ...i18n import Language
from ...i18n import offline as say
from .event_intents import calendar, cancel, create_event, organizer_details
from .events import known_invitations
from .invitation_intents import answers_an_invitation, guest_dates, invitations
from .lookup_intents import clock, knowledge, near_somewhere_of_theirs, permission, places, weekday
from .people_intents import find_user, my_profile, recall, remember

_ADDRESSEE = re.compile(r"^\s*@[A-Za-z0-9_.\-]+[,:]?\s*")


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
    if answers_an_invitation(text, tools, known) and (
        guest_answer := guest_dates(text, now, tools, known, latest, lang)
    ):
        return guest_answer
    intents = (
        remember,
        recall,
        cancel,
        partial(organizer_details, tools=tools),
        partial(invitations, known=known, latest=latest, tools=tools),
        create_event,
        near_somewhere_of_theirs,
        places,
        my_profile,
        permission,
        lambda _, text, ko, now: find_user(whole, text, ko, now),  # "@mina 연락처": mina is asked about
        weekday,
        calendar,
        knowledge,
        clock,
    )
    for intent in intents:
        call = intent(prompt, text, ko, now)
        if call is not None and call.tool_name in tools:
            return call
    guest = "list_invited_events" in tools and "create_event" not in tools
    return TextPart((say.GUEST_CAPABILITIES if guest else say.CAPABILITIES)(lang))
