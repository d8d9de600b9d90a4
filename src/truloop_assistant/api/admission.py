"""Whether a user's chat message is run: the rules every channel's edge applies before queuing a turn.

The Sendbird webhook and the dev server's local channel both ask :func:`refuse`, so a message is
refused for the same reasons, and the user is told the same way, whichever way it came in.
"""

from __future__ import annotations

from ..channels.base import InboundMessage
from ..services import Services


async def refuse(services: Services, message: InboundMessage) -> str | None:
    """Why this message will not be run (a re-delivery, too long, over the rate limit), or None."""
    if await services.inbox.seen(message.channel_url, message.message_id):
        return "duplicate"  # a re-delivery must not count against the user's rate
    settings = services.settings
    if len(message.text) > settings.max_message_chars:
        await services.notices.send(
            message, "too_long", limit=settings.max_message_chars, length=len(message.text)
        )
        return "too_long"
    rate = await services.limiter.hit(message.user_id, scope="turns")
    if not rate.allowed:
        await services.notices.send(message, "rate_limited", window_s=services.limiter.window_s(), once=True)
        return "rate_limited"
    return None
