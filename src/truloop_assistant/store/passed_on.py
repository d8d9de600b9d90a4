"""Where the assistant passed something on for a person, in other people's places: the lines it wrote
on their behalf in others' channels (a relayed message, an invitation to their event) and the
deliveries for them still waiting in others' queues. An erasure of the person reads it to take those
back (``operations.erasure``), without a scan of the keyspace.

The index is the person's own key (their hash tag); each place it names is another conversation's
or person's key, so it is written and read on its own, never in one script with them (Redis Cluster).
It is written before the line or the delivery it names: an erasure that reads it finds everything
written before, or about to be.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, cast

from redis.asyncio import Redis

from . import keys

Kind = Literal["line", "queue"]


@dataclass(frozen=True)
class Place:
    """One place: ``line`` (a channel URL whose transcript holds a line for the person) or ``queue``
    (a user id whose queue of waiting deliveries holds one)."""

    kind: Kind
    target: str


async def note_passed_on(redis: Redis, user_id: str, kind: Kind, target: str) -> None:
    """Note that something was passed on for ``user_id`` at ``target``; the newest ``PASSED_ON_MAX``
    places are kept, for ``PASSED_ON_TTL_S`` after the last."""
    key = keys.passed_on(user_id)
    async with redis.pipeline(transaction=True) as pipe:  # one key: one hash slot
        pipe.zadd(key, {f"{kind} {target}": time.time()})
        pipe.zremrangebyrank(key, 0, -keys.PASSED_ON_MAX - 1)
        pipe.expire(key, keys.PASSED_ON_TTL_S)
        await pipe.execute()


async def passed_on_places(redis: Redis, user_id: str) -> list[Place]:
    """Every place noted for ``user_id``, most recent first."""
    members = cast(list[bytes], await redis.zrevrange(keys.passed_on(user_id), 0, -1))
    places = []
    for member in members:
        kind, _, target = member.decode().partition(" ")
        if kind in ("line", "queue") and target:
            places.append(Place(cast(Kind, kind), target))
    return places
