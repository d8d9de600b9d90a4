"""What admission decided of a channel's recent messages, for ``inspect``: a short list per channel.

Each entry says when, what was decided (:data:`Decision`), and whose message it was (ids, never the
text). The list keeps the newest ``ADMISSIONS_MAX`` entries and is dropped ``ADMISSIONS_TTL_S`` after
the last one; a decision is noted with the writes its caller sends anyway (one pipeline). The sender's
list of channels must name the channel (the caller notes it, if nothing else did), so that an erasure
finds and removes their entries.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal, cast

from redis.asyncio import Redis

from . import keys
from .reads import Write

Decision = Literal[
    "queued",
    "undecided",
    "not_addressed",
    "duplicate",
    "too_long",
    "rate_limited",
    "dropped",
    "too_old",
    "from_bot",
    "edited",
    "deleted",
]

# Drop the entries of one person. KEYS: the list. ARGV: their user id.
_FORGET = """
local gone = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, entry = pcall(cjson.decode, raw)
  if ok and type(entry) == 'table' and entry['user_id'] == ARGV[1] then
    gone = gone + redis.call('LREM', KEYS[1], 0, raw)
  end
end
return gone
"""


def decision_writes(channel_url: str, user_id: str, message_id: str, decision: Decision) -> list[Write]:
    """Note ``decision`` on a message (to send with other writes)."""
    key = keys.admissions(keys.conversation_tag(channel_url))
    entry = json.dumps(
        {"at": round(time.time(), 3), "decision": decision, "user_id": user_id, "message_id": message_id}
    )
    return [
        lambda pipe: pipe.lpush(key, entry),
        lambda pipe: pipe.ltrim(key, 0, keys.ADMISSIONS_MAX - 1),
        lambda pipe: pipe.expire(key, keys.ADMISSIONS_TTL_S),
    ]


async def recent(redis: Redis, channel_url: str) -> list[dict[str, Any]]:
    """The channel's admission decisions, newest first (unreadable entries left out)."""
    key = keys.admissions(keys.conversation_tag(channel_url))
    found = []
    for raw in cast(list[bytes], await redis.lrange(key, 0, keys.ADMISSIONS_MAX - 1)):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            found.append(entry)
    return found


async def forget_user(redis: Redis, channel_url: str, user_id: str) -> int:
    """Drop the decisions on ``user_id``'s messages in the channel; how many went."""
    key = keys.admissions(keys.conversation_tag(channel_url))
    return int(await redis.register_script(_FORGET)(keys=[key], args=[user_id]))
