"""Where people and conversations live, by the prefix of their ids: one namespace per channel.

A person is a chat user id (Sendbird's, the dev channel's), or ``tel:`` and a number in E.164 for a
guest reached by phone. A conversation is a channel url: Sendbird's (and the dev channel's) as they
are, ``sms:`` and a number for a guest's text messages, ``page:`` and a person for a guest's chat on
their guest page. The channel seam routes by these prefixes (``channels.routing``); nothing else need
know what is behind them.
"""

from __future__ import annotations

from typing import Literal

PHONE_PERSON = "tel:"
"""A person reached by phone: ``tel:+821055501234``."""
SMS = "sms:"
"""A guest's text messages with the assistant: ``sms:+821055501234``."""
PAGE = "page:"
"""A guest's chat on their guest page: ``page:`` and the person (``page:tel:+8210…``, ``page:jeff``)."""

Namespace = Literal["chat", "sms", "page"]


def phone_person(e164: str) -> str:
    """The person id of the phone number ``e164`` (``+`` and digits)."""
    return PHONE_PERSON + e164


def phone_of(person: str) -> str | None:
    """The E.164 number of a person reached by phone; None for a chat user."""
    return person[len(PHONE_PERSON) :] if person.startswith(PHONE_PERSON) else None


def sms_channel(e164: str) -> str:
    """The conversation of the number ``e164``'s text messages with the assistant."""
    return SMS + e164


def sms_number(channel_url: str) -> str | None:
    """The number an SMS conversation is with; None for any other conversation."""
    return channel_url[len(SMS) :] if channel_url.startswith(SMS) else None


def page_channel(person: str) -> str:
    """The conversation of ``person``'s chat on their guest page."""
    return PAGE + person


def page_person(channel_url: str) -> str | None:
    """Whose guest page a conversation is; None for any other conversation."""
    return channel_url[len(PAGE) :] if channel_url.startswith(PAGE) else None


def namespace(channel_url: str) -> Namespace:
    """Which channel carries a conversation."""
    if channel_url.startswith(SMS):
        return "sms"
    if channel_url.startswith(PAGE):
        return "page"
    return "chat"


def direct_conversation(person: str) -> str | None:
    """The conversation a person reached by phone has with the assistant (their SMS); None for a
    chat user, whose 1:1 channel the chat service gives."""
    number = phone_of(person)
    return None if number is None else sms_channel(number)
