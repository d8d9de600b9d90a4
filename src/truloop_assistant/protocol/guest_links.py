"""The token of a guest page link: what it is made of, how it is checked, and when it lapses.

A guest reached by SMS gets a link ``<TRULOOP_PUBLIC_URL>/g/<token>`` to a page for one invitation
(one person, one event). The link goes in a text message, so it is short: the token is 24 bytes in
base64url without padding, 32 characters:

    token = base64url( id (16 random bytes) || HMAC-SHA256(key, "guest-link:" || id)[:8] )

The id is unguessable on its own (128 random bits); Redis maps it to the invitation (event id,
person, expiry; ``store.guest_links``), so the token carries no personal data (a phone number in a
link would be read by whoever sees the link). The tag, made with a key kept in Redis, lets a
tampered or made-up token be refused before anything is looked up. A token that is malformed,
carries a wrong tag, maps to nothing or has lapsed reads as None, the same for all.

A link lapses :data:`LINK_GRACE` (7 days) after the later of the event's end and its availability
deadline: a guest can still look back at an event just past, and nobody keeps a working link for
long after it stops mattering.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

ID_BYTES = 16
"""The random part of a token."""
TAG_BYTES = 8
"""The HMAC-SHA256 tag kept (64 bits: a forger must guess it, online, against a rate limit)."""
KEY_BYTES = 32
"""The signing key's length."""
TOKEN_CHARS = 32
"""The length of every token (base64url of ``ID_BYTES + TAG_BYTES`` bytes, no padding)."""
LINK_GRACE = timedelta(days=7)
"""How long a link works after the later of the event's end and its deadline."""

_DOMAIN = b"guest-link:"


def new_key() -> bytes:
    """A fresh signing key."""
    return secrets.token_bytes(KEY_BYTES)


def _tag(key: bytes, token_id: bytes) -> bytes:
    return hmac.new(key, _DOMAIN + token_id, hashlib.sha256).digest()[:TAG_BYTES]


def new_token(key: bytes) -> tuple[str, str]:
    """A fresh token and its id (hex: what the store keeps it under)."""
    token_id = secrets.token_bytes(ID_BYTES)
    raw = token_id + _tag(key, token_id)
    return base64.urlsafe_b64encode(raw).decode().rstrip("="), token_id.hex()


def token_id(key: bytes, token: str) -> str | None:
    """The id of a token made with ``key`` (hex); None for one malformed or with a wrong tag."""
    if len(token) != TOKEN_CHARS or not token.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) != ID_BYTES + TAG_BYTES or base64.urlsafe_b64encode(raw).decode().rstrip("=") != token:
        return None  # another spelling of the same bytes (non-canonical padding bits): not ours
    found, tag = raw[:ID_BYTES], raw[ID_BYTES:]
    return found.hex() if hmac.compare_digest(tag, _tag(key, found)) else None


def link_lapses(end_time: datetime, deadline: datetime | None) -> datetime:
    """When a link to an event that ends at ``end_time`` (answers due by ``deadline``) stops working."""
    last = end_time if deadline is None else max(end_time, deadline)
    return last + LINK_GRACE


def guest_link(public_base: str, token: str) -> str:
    """The guest page's address for ``token`` (``public_base``: ``TRULOOP_PUBLIC_URL`` without its slash)."""
    return f"{public_base}/g/{token}"
