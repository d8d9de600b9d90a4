"""Which messages are turns: the assistant answers where it is a member, and in a channel of several
people (a Supergroup always counts as one) only when it is mentioned.

The webhook decides from what the delivery says when it can (:func:`from_delivery`); when it cannot
(no members listed, no mention), the worker decides once it has looked the channel up
(:func:`unmentioned`): the webhook's answer never waits on the chat service.
"""

from __future__ import annotations

import logging
from typing import Literal

from ..channels.members import Members, Roster

log = logging.getLogger(__name__)

Heard = Literal["turn", "overheard", "elsewhere"]
"""A turn; a message in the assistant's channel not meant for it (kept as context); none of its business."""


def among(ids: list[str], *, mentioned: bool, bot_user_id: str) -> Heard:
    """How the assistant takes a message in a channel of these members (the whole list)."""
    if bot_user_id not in ids:
        return "elsewhere"
    people = set(ids) - {bot_user_id}
    return "turn" if len(people) <= 1 or mentioned else "overheard"


def from_delivery(
    *, listed: list[str] | None, mentioned: bool, supergroup: bool, bot_user_id: str
) -> Heard | None:
    """How the assistant takes a message, from the delivery alone; None when only a look-up can say.

    A mention always decides. A Supergroup is a group: its unmentioned messages are not the
    assistant's (nor kept: a Supergroup's members are never all known).
    """
    if supergroup:
        return "turn" if mentioned else "elsewhere"
    if listed:
        return among(listed, mentioned=mentioned, bot_user_id=bot_user_id)
    return "turn" if mentioned else None


def unmentioned(roster: Roster | None, *, bot_user_id: str) -> Heard:
    """How the assistant takes an unmentioned message in a channel looked up as ``roster``.

    When the members could not be known, it is not a turn: better to miss a 1:1 message than to
    answer in a channel the assistant was never asked into.
    """
    if roster is None:
        return "elsewhere"
    if roster.supergroup:
        return "elsewhere"
    return among(roster.ids, mentioned=False, bot_user_id=bot_user_id)


async def hear(
    members: Members,
    channel_url: str,
    *,
    listed: list[str] | None,
    mentioned: bool,
    bot_user_id: str,
) -> Heard:
    """How the assistant takes a message whose members are at hand (``listed``) or cheap to ask (the
    dev channel's)."""
    ids = listed or await members.of(channel_url)
    if ids is None:
        log.warning("members of %s unknown; answering only if the assistant is mentioned", channel_url)
        return "turn" if mentioned else "elsewhere"
    return among(ids, mentioned=mentioned, bot_user_id=bot_user_id)


async def one_to_one(
    members: Members, channel_url: str, *, listed: list[str] | None, bot_user_id: str
) -> bool:
    """Whether the channel holds exactly the assistant and one person."""
    ids = listed or await members.of(channel_url)
    return ids is not None and bot_user_id in ids and len(set(ids) - {bot_user_id}) == 1
