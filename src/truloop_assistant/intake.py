"""Accepting a user message: de-duplicate on its id, then queue its turn."""

from __future__ import annotations

import logging
from typing import Literal

from .agent.runner import InboundMessage
from .errors import ServiceUnavailable
from .queue import TurnQueue
from .store.turns import TurnStore

log = logging.getLogger(__name__)


async def accept_message(
    store: TurnStore, queue: TurnQueue, message: InboundMessage
) -> Literal["queued", "duplicate"]:
    if not await store.mark_seen(message.channel_url, message.message_id):
        return "duplicate"
    try:
        await queue.message(message)
    except Exception as exc:
        # Forget the mark so the sender's re-delivery gets queued.
        await store.unmark_seen(message.channel_url, message.message_id)
        log.exception("could not queue message %s", message.message_id)
        raise ServiceUnavailable("the turn could not be queued; retry later") from exc
    return "queued"
