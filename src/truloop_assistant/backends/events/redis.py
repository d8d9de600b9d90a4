"""The default event store: events in Redis.

Each event is one JSON value that expires ``keys.EVENT_RETENTION_S`` after the event ends (never
sooner than ``keys.EVENT_MIN_TTL_S`` nor later than ``keys.EVENT_MAX_TTL_S`` after a write); an
owner's events are indexed in a sorted set scored by start time and an invited person's (invitee
or guest) in a set. Writes to an event
are optimistic transactions on its own key; the indexes are updated afterwards and every read
checks what they point to, so a stale index entry is skipped (and pruned), never shown. A
cancelled event is kept (``cancelled_at``) for whoever asks about it, but leaves every index.

Reminders are an index too (``keys.guest_reminders``): a write schedules one for each invited person
(invitee or guest) who newly owes their availability (or owes it by a moved deadline; see
:func:`reminder_at`) and removes it once they answer or leave, or the event is cancelled.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError

from ...protocol.addresses import phone_of
from ...protocol.event_times import span_problem
from ...store import keys
from .port import Event, EventNotFoundError, reminder_at, reminder_member

_EXTEND_TTL = """
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 1
"""

_UPDATABLE = frozenset(
    "title start_time end_time location description invitee_user_ids guests languages "
    "availability_deadline".split()
)
"""Fields :meth:`RedisEventStore.update` changes (``guests``: guest user id -> invitation language;
``languages``: new invitees' invitation languages)."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(6)


def _people(
    event: Event,
    invitees: Iterable[str],
    guests: Mapping[str, str],
    languages: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The changes that make these the invited people (known languages kept, ``languages`` added for
    new invitees); others' answers go."""
    invited = _dedupe(invitees)
    known = {**(languages or {}), **guests, **event.guest_languages}
    everyone = [*invited, *guests]
    return {
        "invitee_user_ids": invited,
        "guest_user_ids": list(guests),
        "guest_availability": {k: v for k, v in event.guest_availability.items() if k in everyone},
        "guest_languages": {p: known[p] for p in everyone if known.get(p)},
    }


class RedisEventStore:
    """Events in Redis: JSON per event, an owner index by start time, an invited index, reminders."""

    def __init__(self, redis: Redis, *, clock: Callable[[], datetime] = _utcnow) -> None:
        self._redis = redis
        self._clock = clock

    def _stamp(self) -> datetime:
        """Now in UTC, to the second."""
        return self._clock().astimezone(UTC).replace(microsecond=0)

    def _ttl(self, event: Event) -> int:
        # In seconds, not dates: an event stored before times were bounded may end near year 9999.
        left = event.end_time.timestamp() + keys.EVENT_RETENTION_S - self._clock().timestamp()
        return int(min(max(left, keys.EVENT_MIN_TTL_S), keys.EVENT_MAX_TTL_S))

    def _check_span(self, event: Event, before: Event | None = None) -> None:
        """A new or moved event's time must be one an event may have (:mod:`...protocol.event_times`)."""
        if before is not None and before.start_time == event.start_time and before.end_time == event.end_time:
            return
        if (problem := span_problem(event.start_time, event.end_time, now=self._clock())) is not None:
            raise ValueError(problem)

    async def _index(self, event: Event, before: Event | None = None) -> None:
        ttl = self._ttl(event)
        pipe = self._redis.pipeline(transaction=False)
        owner_key = keys.owner_events(event.owner_id)
        invited = [] if event.cancelled_at else [*event.invitee_user_ids, *event.guest_user_ids]
        if event.cancelled_at:
            pipe.zrem(owner_key, event.event_id)
        else:
            pipe.zadd(owner_key, {event.event_id: event.start_time.timestamp()})
            pipe.eval(_EXTEND_TTL, 1, owner_key, ttl)
        for user_id in invited:
            pipe.sadd(keys.invited_events(user_id), event.event_id)
            pipe.eval(_EXTEND_TTL, 1, keys.invited_events(user_id), ttl)
        if before is not None:
            for user_id in {*before.invitee_user_ids, *before.guest_user_ids} - set(invited):
                pipe.srem(keys.invited_events(user_id), event.event_id)
        self._schedule_reminders(pipe, event, before)
        if any(phone_of(g) is not None for g in event.guest_user_ids):  # forgotten a while after the event
            forget_at = event.end_time.timestamp() + keys.PHONE_GUEST_RETENTION_S
            pipe.zadd(keys.phone_guests_due(), {event.event_id: forget_at})
        await pipe.execute()

    def _schedule_reminders(self, pipe: Pipeline, event: Event, before: Event | None) -> None:
        """Remind guests who newly owe their availability (or by a moved deadline); forget the others."""
        owing, owed = event.owing(), before.owing() if before is not None else {}
        for guest, deadline in owing.items():
            if owed.get(guest) == deadline:
                continue  # scheduled for this deadline already (or already reminded)
            member = reminder_member(event.event_id, guest)
            due = reminder_at(deadline, self._clock())
            if due is None:
                pipe.zrem(keys.guest_reminders(), member)
            else:
                pipe.zadd(keys.guest_reminders(), {member: due.timestamp()})
        for guest in owed.keys() - owing.keys():
            pipe.zrem(keys.guest_reminders(), reminder_member(event.event_id, guest))

    async def _load_many(self, event_ids: list[str]) -> tuple[list[Event], list[str]]:
        """The events that still exist, and the ids that do not."""
        if not event_ids:
            return [], []
        # One round trip, key by key: events live in different hash slots of a Redis Cluster.
        async with self._redis.pipeline(transaction=False) as pipe:
            for event_id in event_ids:
                pipe.get(keys.event(event_id))
            raws = await pipe.execute()
        found = [Event.model_validate_json(raw) for raw in raws if raw is not None]
        missing = [i for i, raw in zip(event_ids, raws, strict=True) if raw is None]
        return found, missing

    async def list_events(self, owner_id: str, start: datetime, end: datetime) -> list[Event]:
        owner_key = keys.owner_events(owner_id)
        ids = [_text(i) for i in await self._redis.zrangebyscore(owner_key, "-inf", f"({end.timestamp()}")]
        events, missing = await self._load_many(ids)
        if missing:
            await self._redis.zrem(owner_key, *missing)
        found = (e for e in events if e.owner_id == owner_id and e.cancelled_at is None)
        return sorted((e for e in found if e.overlaps(start, end)), key=lambda e: (e.start_time, e.event_id))

    async def get(self, event_id: str) -> Event | None:
        raw = await self._redis.get(keys.event(event_id))
        return None if raw is None else Event.model_validate_json(raw)

    async def create(
        self,
        owner_id: str,
        *,
        title: str,
        start_time: datetime,
        end_time: datetime,
        location: str | None = None,
        description: str | None = None,
        invitee_user_ids: Iterable[str] = (),
        availability_deadline: datetime | None = None,
        guests: Mapping[str, str] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> Event:
        stamp = self._stamp()
        invitees = _dedupe(invitee_user_ids)
        known = {**(languages or {}), **(guests or {})}
        event = Event(
            event_id=new_event_id(),
            owner_id=owner_id,
            title=title,
            start_time=start_time,
            end_time=end_time,
            location=location,
            description=description,
            invitee_user_ids=invitees,
            guest_user_ids=list(guests or {}),
            guest_languages={p: known[p] for p in [*invitees, *(guests or {})] if known.get(p)},
            availability_deadline=availability_deadline,
            created_at=stamp,
            updated_at=stamp,
        )
        self._check_span(event)
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
                    changed = {**change(before), "updated_at": self._stamp()}
                    after = Event.model_validate({**before.model_dump(), **changed})
                    self._check_span(after, before)
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
            languages = update.pop("languages", None)
            if {"invitee_user_ids", "guests"} & update.keys():
                invitees = update.pop("invitee_user_ids", event.invitee_user_ids)
                update.update(_people(event, invitees, update.pop("guests", event.guests), languages))
            return update

        return await self._mutate(event_id, change)

    async def invite(
        self,
        event_id: str,
        user_ids: Iterable[str],
        guests: Mapping[str, str] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> Event:
        new, new_guests = list(user_ids), dict(guests or {})

        def change(event: Event) -> dict[str, Any]:
            return _people(event, [*event.invitee_user_ids, *new], {**new_guests, **event.guests}, languages)

        return await self._mutate(event_id, change)

    async def cancel(self, event_id: str, *, reason: str | None = None) -> Event:
        def change(event: Event) -> dict[str, Any]:
            return {} if event.cancelled_at else {"cancelled_at": self._stamp(), "cancel_reason": reason}

        return await self._mutate(event_id, change)

    async def set_availability(self, event_id: str, user_id: str, dates: list[str]) -> Event:
        return await self._mutate(
            event_id,
            lambda event: {"guest_availability": {**event.guest_availability, user_id: sorted(set(dates))}},
        )

    async def forget_guests(self, event_id: str, user_ids: Iterable[str]) -> Event:
        """Take guests off the event: their places, their dates and their invitations' languages."""
        gone = set(user_ids)

        def change(event: Event) -> dict[str, Any]:
            guests = {g: language for g, language in event.guests.items() if g not in gone}
            return _people(event, event.invitee_user_ids, guests)

        return await self._mutate(event_id, change)

    async def list_invited(self, user_id: str) -> list[Event]:
        invited_key = keys.invited_events(user_id)
        ids = sorted(_text(i) for i in await self._redis.smembers(invited_key))
        events, missing = await self._load_many(ids)
        if missing:
            await self._redis.srem(invited_key, *missing)
        invited = (e for e in events if e.is_invited(user_id) and e.cancelled_at is None)
        return sorted(invited, key=lambda e: (e.start_time, e.event_id))
