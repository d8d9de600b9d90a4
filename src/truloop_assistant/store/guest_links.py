"""Guest page links in Redis: one per invitation, each mapping its token to the event and the person.

How a token is made and checked is :mod:`..protocol.guest_links`; this keeps the signing key (made
once, by whoever needs it first, with ``SET NX``: nothing to configure), each link (its token's id ->
event, person and when it lapses, expiring then), and each person's links (event -> token), so the
same invitation gets the same link again while it works, and an erasure of the person finds them.
The two live in different hash slots; each write touches one key, in an order that leaves nothing
unfindable: a link is written before the person's index points to it, and dropped from it last.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, cast

from redis.asyncio import Redis

from ..protocol.guest_links import guest_link, link_lapses, new_key, new_token, token_id
from . import guest_link_keys as gk


class Event(Protocol):
    """What a link needs of an event (``backends.events.Event`` has it): which, and until when."""

    @property
    def event_id(self) -> str: ...

    @property
    def end_time(self) -> datetime: ...

    @property
    def availability_deadline(self) -> datetime | None: ...


@dataclass(frozen=True)
class GuestLink:
    """What a valid token stands for: one person's invitation to one event, until it lapses."""

    event_id: str
    person: str
    lapses: datetime


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class GuestLinks:
    """Issues, reads and forgets guest links. ``clock``: Unix seconds, for when a link has lapsed."""

    def __init__(self, redis: Redis, *, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        self._clock = clock
        self._key: bytes | None = None

    async def signing_key(self) -> bytes:
        """The key links are signed with: the one in Redis, made there first if there is none."""
        if self._key is None:
            await self.redis.set(gk.guest_link_key(), new_key(), nx=True)
            found = cast(bytes | None, await self.redis.get(gk.guest_link_key()))
            if found is None:  # deleted between the two commands: make it again next time
                raise RuntimeError("the guest links' signing key vanished from Redis as it was made")
            self._key = found
        return self._key

    async def issue(self, event: Event, person: str) -> str:
        """The token of ``person``'s link to ``event``: the one they have while it works, else a new
        one. It lapses as the event says now (a later end or deadline keeps an issued link longer)."""
        lapses = link_lapses(event.end_time, event.availability_deadline)
        index = gk.guest_links_of(person)
        known = cast(bytes | None, await self.redis.hget(index, event.event_id))
        if known is not None and (link := await self.read(_text(known))) is not None:
            if link.event_id == event.event_id and link.person == person:
                await self._keep(_text(known), link, lapses)
                return _text(known)
        token, tid = new_token(await self.signing_key())
        await self._write(tid, event.event_id, person, lapses)
        if known is None:
            if not await self.redis.hsetnx(index, event.event_id, token):
                # Another request issued this invitation's link a moment ago: theirs is the one.
                await self.redis.delete(gk.guest_link(tid))
                return await self.issue(event, person)
        else:
            await self.redis.hset(index, event.event_id, token)  # the known one had lapsed or gone
        await self._expire_index(index, lapses)
        return token

    async def read(self, token: str) -> GuestLink | None:
        """The invitation ``token`` stands for; None when it is malformed, tampered, unknown or lapsed."""
        tid = token_id(await self.signing_key(), token)
        if tid is None:
            return None
        raw = cast(bytes | None, await self.redis.get(gk.guest_link(tid)))
        if raw is None:
            return None
        fields = json.loads(raw)
        lapses = datetime.fromtimestamp(fields["lapses"], UTC)
        if lapses.timestamp() <= self._clock():
            return None
        return GuestLink(event_id=fields["event"], person=fields["person"], lapses=lapses)

    async def keep_until(self, token: str, link: GuestLink, lapses: datetime) -> None:
        """Let a link work until ``lapses`` when that is later than it would (its event moved later)."""
        await self._keep(token, link, lapses)

    async def forget(self, event_id: str, person: str) -> None:
        """Void the person's link to one event (they were taken off it)."""
        index = gk.guest_links_of(person)
        token = cast(bytes | None, await self.redis.hget(index, event_id))
        if token is not None:
            await self._drop(_text(token))
            await self.redis.hdel(index, event_id)

    async def forget_person(self, person: str) -> int:
        """Void every link of the person (their data is erased); how many there were."""
        index = gk.guest_links_of(person)
        tokens = cast(dict[bytes, bytes], await self.redis.hgetall(index))
        for token in tokens.values():
            await self._drop(_text(token))
        await self.redis.delete(index)
        return len(tokens)

    async def _keep(self, token: str, link: GuestLink, lapses: datetime) -> None:
        if int(lapses.timestamp()) <= int(link.lapses.timestamp()):  # kept in whole seconds
            return
        tid = token_id(await self.signing_key(), token)
        if tid is not None:
            await self._write(tid, link.event_id, link.person, lapses)
            await self._expire_index(gk.guest_links_of(link.person), lapses)

    async def _write(self, tid: str, event_id: str, person: str, lapses: datetime) -> None:
        record = json.dumps({"event": event_id, "person": person, "lapses": int(lapses.timestamp())})
        # Redis expires it by its own clock; ``read`` checks by ours as well. One already lapsed is
        # kept a second, so SET is given a valid time and nothing reads it as working.
        at = max(int(lapses.timestamp()), int(time.time()) + 1)
        await self.redis.set(gk.guest_link(tid), record, exat=at)

    async def _expire_index(self, index: str, lapses: datetime) -> None:
        # The index lives as long as the person's last link: never shorten it.
        ttl = int(await self.redis.ttl(index))
        at = int(lapses.timestamp())
        if ttl < 0 or time.time() + ttl < at:
            await self.redis.expireat(index, max(at, int(time.time()) + 1))

    async def _drop(self, token: str) -> None:
        tid = token_id(await self.signing_key(), token)
        if tid is not None:
            await self.redis.delete(gk.guest_link(tid))


async def link_for(redis: Redis, public_base: str, event: Event, person: str) -> str:
    """The address of ``person``'s guest page for ``event`` (for an invitation's text), issued if new."""
    return guest_link(public_base, await GuestLinks(redis).issue(event, person))
