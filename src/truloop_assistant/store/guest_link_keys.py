"""The keys of guest pages: the links' signing key, each link, each person's links, each page's chat.

Named here in the manner of ``keys``: each with what it holds and how long it lives.
"""

from __future__ import annotations

import hashlib

from .conversation_keys import conversation_tag
from .key_limits import SEEN_TTL_S
from .key_prefix import prefix

__all__ = [
    "PAGE_MESSAGES_MAX",
    "PAGE_MESSAGES_TTL_S",
    "PAGE_SEEN_TTL_S",
    "guest_link",
    "guest_link_key",
    "guest_links_of",
    "page_messages",
    "page_seen",
    "page_seq",
]

PAGE_MESSAGES_MAX = 200
"""Messages a guest page's chat keeps (the newest)."""
PAGE_MESSAGES_TTL_S = 30 * 24 * 3600
"""How long a guest page's chat is kept after its last message."""
PAGE_SEEN_TTL_S = SEEN_TTL_S
"""How long a message sent to a guest page's chat is remembered, so that a retry is not shown twice."""


def guest_link_key() -> str:
    """String: the key guest links are signed with (made once, ``SET NX``, by whoever needs it first).
    It never expires: every link would stop working with it."""
    return f"{prefix()}:guest-links:key"


def guest_link(token_id: str) -> str:
    """String: JSON ``{"event", "person", "lapses"}`` of the link whose token has ``token_id`` (hex);
    expires when the link lapses (``protocol.guest_links.link_lapses``)."""
    return f"{prefix()}:guest-link:{token_id}"


def _user_tag(person: str) -> str:
    # The same hash tag as the person's other keys (``user_keys``): an erasure finds them together.
    return "{u:" + hashlib.sha256(person.encode()).hexdigest()[:20] + "}"


def guest_links_of(person: str) -> str:
    """Hash: event id -> the token of the person's link to that event (one link per invitation);
    expires with the last of their links."""
    return f"{prefix()}:{_user_tag(person)}:guest-links"


def page_messages(channel_url: str) -> str:
    """List of a guest page's chat messages as JSON, oldest first: the newest ``PAGE_MESSAGES_MAX``,
    for ``PAGE_MESSAGES_TTL_S`` after the last one."""
    return f"{prefix()}:{conversation_tag(channel_url)}:page:messages"


def page_seq(channel_url: str) -> str:
    """Counter of a guest page's chat: the id of its last message (lives as long as the messages)."""
    return f"{prefix()}:{conversation_tag(channel_url)}:page:seq"


def page_seen(channel_url: str, dedup_id: str) -> str:
    """Mark: a message with this de-duplication id is in the chat (``PAGE_SEEN_TTL_S``)."""
    return f"{prefix()}:{conversation_tag(channel_url)}:page:seen:{dedup_id}"
