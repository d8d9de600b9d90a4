"""Events kept by the app itself (not the phone's calendar): an owner, invitees and their availability.

``RedisEventStore`` is the default. Each event is one JSON value that expires
``keys.EVENT_RETENTION_S`` after the event ends; an owner's events are indexed in a sorted set
scored by start time and an invitee's in a set. Writes to an event are optimistic transactions on
its own key; the indexes are updated afterwards and every read checks what they point to, so a
stale index entry is skipped (and pruned), never shown.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel, Field
from redis.asyncio import Redis
from redis.exceptions import WatchError

from ..store import keys

_EXTEND_TTL = """
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 1
"""

_UPDATABLE = frozenset(
    {
        "title",
        "start_time",
        "end_time",
        "location",
        "description",
        "invitee_user_ids",
        "availability_deadline",
    }
)


class Event(BaseModel):
    event_id: str
    owner_id: str
    title: str
    start_time: str = Field(description="ISO 8601 with UTC offset")
    end_time: str = Field(description="ISO 8601 with UTC offset")
    location: str | None = None
    description: str | None = None
    invitee_user_ids: list[str] = Field(default_factory=list)
    availability_deadline: str | None = Field(
        default=None, description="ISO 8601 with offset: invitees should give their availability by then"
    )
    guest_availability: dict[str, list[str]] = Field(
        default_factory=dict, description="Guest user id -> dates (YYYY-MM-DD) the guest is available"
    )
    created_at: str
    updated_at: str

    @property
    def start(self) -> datetime:
        return datetime.fromisoformat(self.start_time)

    @property
    def end(self) -> datetime:
        return datetime.fromisoformat(self.end_time)


class EventNotFoundError(LookupError):
    """No event has this id (or it has expired)."""


class EventStore(Protocol):
    async def list_events(self, owner_id: str, start: datetime, end: datetime) -> list[Event]:
        """The owner's events overlapping [start, end), sorted by start."""
        ...

    async def get(self, event_id: str) -> Event | None: ...

    async def create(
        self,
        owner_id: str,
        *,
        title: str,
        start_time: str,
        end_time: str,
        location: str | None = None,
        description: str | None = None,
        invitee_user_ids: Iterable[str] = (),
        availability_deadline: str | None = None,
    ) -> Event: ...

    async def update(self, event_id: str, **changes: Any) -> Event:
        """Change fields of an event; raises :class:`EventNotFoundError`."""
        ...

    async def invite(self, event_id: str, user_ids: Iterable[str]) -> Event:
        """Add invitees (already invited ones are skipped); raises :class:`EventNotFoundError`."""
        ...

    async def set_guest_availability(self, event_id: str, guest_id: str, dates: list[str]) -> Event:
        """Replace a guest's available dates; raises :class:`EventNotFoundError`."""
        ...

    async def list_invited(self, user_id: str) -> list[Event]:
        """Events the user is invited to, sorted by start."""
        ...


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(6)


class RedisEventStore:
    """Events in Redis: JSON per event, an owner index by start time, an invitee index."""

    def __init__(self, redis: Redis, *, clock: Callable[[], datetime] = _utcnow) -> None:
        self._redis = redis
        self._clock = clock

    def _stamp(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="seconds")

    def _ttl(self, event: Event) -> int:
        expires = event.end + timedelta(seconds=keys.EVENT_RETENTION_S)
        return max(int((expires - self._clock()).total_seconds()), keys.EVENT_MIN_TTL_S)

    async def _index(self, event: Event, before: Event | None = None) -> None:
        ttl = self._ttl(event)
        pipe = self._redis.pipeline(transaction=False)
        owner_key = keys.owner_events(event.owner_id)
        pipe.zadd(owner_key, {event.event_id: event.start.timestamp()})
        pipe.eval(_EXTEND_TTL, 1, owner_key, ttl)
        for user_id in event.invitee_user_ids:
            pipe.sadd(keys.invited_events(user_id), event.event_id)
            pipe.eval(_EXTEND_TTL, 1, keys.invited_events(user_id), ttl)
        if before is not None:
            for user_id in set(before.invitee_user_ids) - set(event.invitee_user_ids):
                pipe.srem(keys.invited_events(user_id), event.event_id)
        await pipe.execute()

    async def _load_many(self, event_ids: list[str]) -> tuple[list[Event], list[str]]:
        """The events that still exist, and the ids that do not."""
        if not event_ids:
            return [], []
        raws = await self._redis.mget([keys.event(i) for i in event_ids])
        found = [Event.model_validate_json(raw) for raw in raws if raw is not None]
        missing = [i for i, raw in zip(event_ids, raws, strict=True) if raw is None]
        return found, missing

    async def list_events(self, owner_id: str, start: datetime, end: datetime) -> list[Event]:
        owner_key = keys.owner_events(owner_id)
        ids = [_text(i) for i in await self._redis.zrangebyscore(owner_key, "-inf", f"({end.timestamp()}")]
        events, missing = await self._load_many(ids)
        if missing:
            await self._redis.zrem(owner_key, *missing)
        return sorted(
            (e for e in events if e.owner_id == owner_id and e.start < end and e.end > start),
            key=lambda e: (e.start, e.event_id),
        )

    async def get(self, event_id: str) -> Event | None:
        raw = await self._redis.get(keys.event(event_id))
        return None if raw is None else Event.model_validate_json(raw)

    async def create(
        self,
        owner_id: str,
        *,
        title: str,
        start_time: str,
        end_time: str,
        location: str | None = None,
        description: str | None = None,
        invitee_user_ids: Iterable[str] = (),
        availability_deadline: str | None = None,
    ) -> Event:
        stamp = self._stamp()
        event = Event(
            event_id=new_event_id(),
            owner_id=owner_id,
            title=title,
            start_time=start_time,
            end_time=end_time,
            location=location,
            description=description,
            invitee_user_ids=_dedupe(invitee_user_ids),
            availability_deadline=availability_deadline,
            created_at=stamp,
            updated_at=stamp,
        )
        if event.end <= event.start:
            raise ValueError(f"end_time {end_time} is not after start_time {start_time}")
        key = keys.event(event.event_id)
        await self._redis.set(key, event.model_dump_json(), ex=self._ttl(event), nx=True)
        await self._index(event)
        return event

    async def _mutate(self, event_id: str, change: Callable[[Event], dict[str, Any]]) -> Event:
        """Apply ``change`` (event -> changed fields) atomically; retry when someone else wrote first."""
        key = keys.event(event_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        raise EventNotFoundError(event_id)
                    before = Event.model_validate_json(raw)
                    after = before.model_copy(update={**change(before), "updated_at": self._stamp()})
                    after = Event.model_validate(after.model_dump())
                    if after.end <= after.start:
                        raise ValueError(f"end_time {after.end_time} is not after {after.start_time}")
                    pipe.multi()
                    pipe.set(key, after.model_dump_json(), ex=self._ttl(after))
                    await pipe.execute()
                    break
                except WatchError:
                    continue
        await self._index(after, before)
        return after

    async def update(self, event_id: str, **changes: Any) -> Event:
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise TypeError(f"cannot update {', '.join(sorted(unknown))}")

        def change(event: Event) -> dict[str, Any]:
            update = dict(changes)
            if "invitee_user_ids" in update:
                invitees = _dedupe(update["invitee_user_ids"])
                update["invitee_user_ids"] = invitees
                update["guest_availability"] = {
                    k: v for k, v in event.guest_availability.items() if k in invitees
                }
            return update

        return await self._mutate(event_id, change)

    async def invite(self, event_id: str, user_ids: Iterable[str]) -> Event:
        new = list(user_ids)
        return await self._mutate(
            event_id, lambda event: {"invitee_user_ids": _dedupe([*event.invitee_user_ids, *new])}
        )

    async def set_guest_availability(self, event_id: str, guest_id: str, dates: list[str]) -> Event:
        return await self._mutate(
            event_id,
            lambda event: {"guest_availability": {**event.guest_availability, guest_id: sorted(set(dates))}},
        )

    async def list_invited(self, user_id: str) -> list[Event]:
        invited_key = keys.invited_events(user_id)
        ids = sorted(_text(i) for i in await self._redis.smembers(invited_key))
        events, missing = await self._load_many(ids)
        if missing:
            await self._redis.srem(invited_key, *missing)
        invited = (e for e in events if user_id in e.invitee_user_ids)
        return sorted(invited, key=lambda e: (e.start, e.event_id))
