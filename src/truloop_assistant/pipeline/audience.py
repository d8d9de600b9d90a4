"""Which messages are turns: the assistant answers where it is a member, and in a channel of several
people only when it is mentioned.
"""

from __future__ import annotations

import logging
from typing import Literal

from ..channels.members import Members

log = logging.getLogger(__name__)

Heard = Literal["turn", "overheard", "elsewhere"]
"""A turn; a message in the assistant's channel not meant for it (kept as context); none of its business."""


async def hear(
    members: Members,
    channel_url: str,
    *,
    listed: list[str] | None,
    mentioned: bool,
    bot_user_id: str,
) -> Heard:
    """How the assistant takes a message in ``channel_url``.

    ``listed``: the members the delivery carried (else they are looked up). When they cannot be
    known, only a mention makes it a turn: better to miss a 1:1 message for a minute than to
    answer in a channel the assistant was never asked into.
    """
    ids = listed or await members.of(channel_url)
    if ids is None:
        log.warning("members of %s unknown; answering only if the assistant is mentioned", channel_url)
        return "turn" if mentioned else "elsewhere"
    if bot_user_id not in ids:
        return "elsewhere"
    people = set(ids) - {bot_user_id}
    return "turn" if len(people) <= 1 or mentioned else "overheard"


async def one_to_one(
    members: Members, channel_url: str, *, listed: list[str] | None, bot_user_id: str
) -> bool:
    """Whether the channel holds exactly the assistant and one person."""
    ids = listed or await members.of(channel_url)
    return ids is not None and bot_user_id in ids and len(set(ids) - {bot_user_id}) == 1
