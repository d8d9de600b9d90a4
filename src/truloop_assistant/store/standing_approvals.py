"""A person's standing approvals: the calls they said "always" to, which of them, and since when.

Each approval is one tool and a scope (which of its calls it covers, as the dialog the person
answered said: ``protocol/standing_scope.py``), and lasts ``STANDING_APPROVALS_TTL_S`` after it was
given. An entry kept before approvals had a scope (a bare tool name) covers nothing: it is skipped
when read and removed when that tool's approvals end.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

from . import keys
from .reads import Read


@dataclass(frozen=True)
class Standing:
    """One standing approval."""

    tool: str
    since: float
    """When the person gave it (epoch seconds)."""
    scope: dict[str, Any]
    """Which of the tool's calls it covers (``protocol.standing_scope``)."""

    @property
    def until(self) -> float:
        """When it ends, unless given again (epoch seconds)."""
        return self.since + keys.STANDING_APPROVALS_TTL_S


def standing_read(user_id: str) -> Read[tuple[Standing, ...]]:
    """The person's standing approvals in force, oldest first, as a read to batch."""
    key = keys.standing_approvals(user_id)
    return Read(lambda r: r.hgetall(key), lambda raw: _in_force(raw, time.time()))


async def standing(redis: Redis, user_id: str) -> tuple[Standing, ...]:
    """:func:`standing_read`, on its own."""
    return await standing_read(user_id).once(redis)


async def allow_always(
    redis: Redis, user_id: str, tool: str, scope: dict[str, Any], *, now: float | None = None
) -> None:
    """The person is not asked again for ``tool``'s calls within ``scope`` (given again: from ``now``)."""
    key = keys.standing_approvals(user_id)
    at = time.time() if now is None else now
    value = json.dumps({"tool": tool, "since": at, "scope": scope}, ensure_ascii=False)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hset(key, _field(tool, scope), value)
        pipe.hdel(key, tool)  # one kept before approvals had a scope
        pipe.expire(key, keys.STANDING_APPROVALS_TTL_S)
        pipe.hlen(key)
        *_, count = await pipe.execute()
    if count > keys.STANDING_APPROVALS_MAX:
        await _drop_oldest(redis, key, count - keys.STANDING_APPROVALS_MAX)


async def end_standing(redis: Redis, user_id: str, tool: str) -> None:
    """Every standing approval of ``tool`` ends: the person is asked again (nothing to do when none)."""
    key = keys.standing_approvals(user_id)
    found = cast(list[bytes], await redis.hkeys(key))
    fields = [f for f in found if f.decode() == tool or f.decode().startswith(f"{tool}:")]
    if fields:
        await redis.hdel(key, *fields)


async def end_all_standing(redis: Redis, user_id: str) -> None:
    """Every standing approval of the person ends (their data is erased)."""
    await redis.delete(keys.standing_approvals(user_id))


def _field(tool: str, scope: dict[str, Any]) -> str:
    """The approval's field: the same tool and scope given again replaces it."""
    canonical = json.dumps(scope, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{tool}:{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


def _parsed(raw: bytes) -> Standing | None:
    """An approval as stored; None for one without a scope (kept before they had one) or unreadable."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("scope"), dict):
        return None
    try:
        return Standing(tool=str(value["tool"]), since=float(value["since"]), scope=value["scope"])
    except (KeyError, TypeError, ValueError):
        return None


def _in_force(raw: dict[bytes, bytes], now: float) -> tuple[Standing, ...]:
    found = (_parsed(value) for value in raw.values())
    return tuple(sorted((s for s in found if s is not None and s.until > now), key=lambda s: s.since))


async def _drop_oldest(redis: Redis, key: str, count: int) -> None:
    """Remove ``count`` entries: those without a scope or past their time first, then the oldest."""
    raw = cast(dict[bytes, bytes], await redis.hgetall(key))
    now = time.time()

    def age(item: tuple[bytes, bytes]) -> float:
        found = _parsed(item[1])
        return float("-inf") if found is None or found.until <= now else found.since

    oldest = [field for field, _ in sorted(raw.items(), key=age)[:count]]
    if oldest:
        await redis.hdel(key, *oldest)
