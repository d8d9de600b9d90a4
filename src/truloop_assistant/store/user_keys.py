"""The keys of one person, app-wide: each person's keys share a hash tag of their own."""

from __future__ import annotations

import hashlib

from .key_prefix import prefix

__all__ = [
    "admin_role",
    "client_failures",
    "client_tools",
    "direct_channel",
    "erased",
    "invitations_sent",
    "memories",
    "memory_order",
    "notice_once",
    "notices_sent",
    "passed_on",
    "standing_approvals",
    "tokens_not_before",
    "user_calls",
    "user_channels",
]


# -- memory (hash tag {m:<digest>}, apart from the rest of the person's keys)


def _memory_tag(user_id: str) -> str:
    return "{m:" + hashlib.sha256(user_id.encode()).hexdigest()[:20] + "}"


def memories(user_id: str) -> str:
    """Hash: memory id -> JSON memory, one per user."""
    return f"{prefix()}:{_memory_tag(user_id)}:memories"


def memory_order(user_id: str) -> str:
    """Sorted set: memory id scored by creation time (microseconds), to list and trim by age."""
    return f"{prefix()}:{_memory_tag(user_id)}:memories:order"


# -- everything else of the person's (hash tag {u:<digest>})


def _user_tag(user_id: str) -> str:
    return "{u:" + hashlib.sha256(user_id.encode()).hexdigest()[:20] + "}"


def user_channels(user_id: str) -> str:
    """Set of the channels where a person wrote with the assistant there (to it, or to others in its
    group channels), to erase their data on request; lives ``USER_CHANNELS_TTL_S`` after their last
    message or turn."""
    return f"{prefix()}:{_user_tag(user_id)}:channels"


def direct_channel(user_id: str) -> str:
    """Hash: bot user id -> the URL of that bot's 1:1 channel with the person on the chat service, as last
    found or made there, so that every process delivers to it without asking again; lives
    ``DIRECT_CHANNEL_TTL_S`` after the last write."""
    return f"{prefix()}:{_user_tag(user_id)}:direct-channel"


def erased(user_id: str) -> str:
    """When the person last had their data erased (epoch seconds): what was given up of theirs before
    it (a dead letter) is not replayed. Lives ``LEDGER_TTL_S``, as long as the dead letters."""
    return f"{prefix()}:{_user_tag(user_id)}:erased"


def client_tools(user_id: str) -> str:
    """Hash: device id (``""`` for an app that names none) -> that device's declaration of tools
    (``PUT /api/v1/agent/client-tools``) with when it was made."""
    return f"{prefix()}:{_user_tag(user_id)}:device-tools"


def client_failures(user_id: str) -> str:
    """Hash: tool name -> how many times in a row the person's devices failed it (in any channel)."""
    return f"{prefix()}:{_user_tag(user_id)}:client-failures"


def standing_approvals(user_id: str) -> str:
    """Hash: ``<tool>:<scope digest>`` -> a standing approval as JSON (``tool``, ``since`` in epoch
    seconds, ``scope``: which of that tool's calls run without asking the person). Each lasts
    ``STANDING_APPROVALS_TTL_S`` after it was given (the key as long, after the last one given), at
    most ``STANDING_APPROVALS_MAX`` of them."""
    return f"{prefix()}:{_user_tag(user_id)}:approvals"


def user_calls(user_id: str) -> str:
    """Sorted set of a person's pending call ids by when they were issued, with each call's
    conversation tag in the member (``<tag> <call id>``); settled ones are dropped when listed."""
    return f"{prefix()}:{_user_tag(user_id)}:calls"


def tokens_not_before(user_id: str) -> str:
    """When the person's device tokens were last revoked (epoch seconds): a token issued before (its
    ``iat``), or one without ``iat``, is refused. Lives ``TRULOOP_JWT_MAX_TTL_S`` plus
    ``TOKENS_NOT_BEFORE_GRACE_S`` after the last revocation."""
    return f"{prefix()}:{_user_tag(user_id)}:tokens-not-before"


def passed_on(user_id: str) -> str:
    """Sorted set of where the assistant passed something on for the person, scored by when it last
    did: ``line <channel URL>`` (a line written on their behalf in that channel's transcript: a
    message relayed for them, an invitation to their event) and ``queue <user id>`` (a delivery for
    them waiting in that person's queue), so that an erasure finds them without a scan. The newest
    ``PASSED_ON_MAX``; lives ``PASSED_ON_TTL_S`` after the last one."""
    return f"{prefix()}:{_user_tag(user_id)}:passed-on"


def admin_role(user_id: str) -> str:
    """``1`` or ``0``: whether the directory had the person as an admin a moment ago (rate limits)."""
    return f"{prefix()}:{_user_tag(user_id)}:admin"


def invitations_sent(user_id: str) -> str:
    """How many people the person had invited to their events lately: a count that lives
    ``INVITATIONS_WINDOW_S`` from the first invitation of its window."""
    return f"{prefix()}:{_user_tag(user_id)}:invitations-sent"


def notices_sent(user_id: str) -> str:
    """How many notes the server itself sent the person lately (why a message was not answered), in
    every channel: a count that lives ``NOTICE_WINDOW_S`` from the first note of its window."""
    return f"{prefix()}:{_user_tag(user_id)}:notices"


def notice_once(user_id: str, kind: str) -> str:
    """Set while the person has been told ``kind`` (e.g. that they send too fast): once per window."""
    return f"{prefix()}:{_user_tag(user_id)}:notice:{kind}"
