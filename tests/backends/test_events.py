"""The Redis event store: events, the owner's and invitees' indexes, and their lifetimes."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from redis.asyncio import Redis

from truloop_assistant.backends.events import Event, EventNotFoundError, RedisEventStore
from truloop_assistant.protocol import event_times
from truloop_assistant.store import keys


def now() -> datetime:
    return datetime(2026, 11, 26, 1, 49, tzinfo=UTC)


@pytest.fixture
def store(redis: Redis) -> RedisEventStore:
    return RedisEventStore(redis, clock=now)


SEOUL = timezone(timedelta(hours=9))


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 12, day, hour, tzinfo=SEOUL)


span = at


async def make(
    store: RedisEventStore, title: str, day: int, hour: int, owner: str = "jeff", **kw: object
) -> Event:
    return await store.create(owner, title=title, start_time=at(day, hour), end_time=at(day, hour + 1), **kw)  # type: ignore[arg-type]


async def test_created_event_is_stored_with_an_id_and_a_lifetime(
    store: RedisEventStore, redis: Redis
) -> None:
    event = await make(store, "팀 회식", 3, 19, invitee_user_ids=["mina", "mina", "seojun"], location="강남")
    assert re.fullmatch(r"evt_[0-9a-f]{12}", event.event_id)
    assert event.invitee_user_ids == ["mina", "seojun"]
    assert event.created_at == event.updated_at == now()
    assert event.start_time == at(3, 19) and event.start_time.utcoffset() == timedelta(hours=9)
    # Stored as ISO 8601 with the offset each time was given in (UTC for the store's own stamps).
    stored = json.loads(await redis.get(keys.event(event.event_id)) or "{}")
    assert (stored["start_time"], stored["end_time"]) == (
        "2026-12-03T19:00:00+09:00",
        "2026-12-03T20:00:00+09:00",
    )
    assert stored["created_at"] == stored["updated_at"] == "2026-11-26T01:49:00+00:00"
    assert stored["availability_deadline"] is None and stored["cancelled_at"] is None
    assert await store.get(event.event_id) == event
    assert await store.get("evt_000000000000") is None

    ttl = await redis.ttl(keys.event(event.event_id))
    expected = (span(3, 20) - now()).total_seconds() + keys.EVENT_RETENTION_S
    assert abs(ttl - expected) < 5
    for key in (keys.owner_events("jeff"), keys.invited_events("mina")):
        assert abs(await redis.ttl(key) - expected) < 5


async def test_end_must_follow_start(store: RedisEventStore) -> None:
    with pytest.raises(ValueError, match="not after"):
        await store.create("jeff", title="x", start_time=at(3, 10), end_time=at(3, 10))


async def test_the_store_refuses_times_no_event_may_have(store: RedisEventStore) -> None:
    edge = datetime.fromisoformat("9999-12-31T23:00:00-14:00")
    for start, end, said in [
        (at(3, 10), at(3, 10) + timedelta(days=20), "at most 14 days"),
        (datetime(1999, 12, 31, 10, tzinfo=SEOUL), datetime(1999, 12, 31, 11, tzinfo=SEOUL), "2000"),
        (at(3, 10) + timedelta(days=2 * 366), at(3, 11) + timedelta(days=2 * 366), "2 years ahead"),
        (edge, edge + timedelta(minutes=30), "2 years ahead"),
    ]:
        with pytest.raises(ValueError, match=said):
            await store.create("jeff", title="x", start_time=start, end_time=end)
    event = await make(store, "x", 3, 10)
    with pytest.raises(ValueError, match="at most 14 days"):
        await store.update(event.event_id, end_time=at(3, 10) + timedelta(days=15))


async def test_an_event_is_never_kept_longer_than_the_longest_an_event_needs(
    store: RedisEventStore, redis: Redis
) -> None:
    # What bounds every event's time fits in the key's longest lifetime.
    needed = (event_times.FURTHEST_AHEAD + event_times.LONGEST).total_seconds() + keys.EVENT_RETENTION_S
    assert keys.EVENT_MAX_TTL_S >= needed
    # An event written before times were bounded, ending near the calendar's end: the next write keeps
    # it for the longest lifetime, not for thousands of years (and no date arithmetic overflows).
    old = await make(store, "old", 3, 10)
    key = keys.event(old.event_id)
    stored = json.loads(await redis.get(key) or "{}")
    stored.update(start_time="9999-12-31T20:00:00-14:00", end_time="9999-12-31T23:00:00-14:00")
    await redis.set(key, json.dumps(stored))
    await store.set_availability(old.event_id, "mina", ["2026-12-03"])
    assert 0 < await redis.ttl(key) <= keys.EVENT_MAX_TTL_S
    assert await redis.ttl(keys.owner_events("jeff")) <= keys.EVENT_MAX_TTL_S


async def test_list_events_returns_the_owners_overlapping_events_in_order(store: RedisEventStore) -> None:
    late = await make(store, "late", 5, 15)
    early = await make(store, "early", 4, 9)
    await make(store, "before", 1, 9)
    await make(store, "after", 10, 9)
    await make(store, "someone else's", 4, 10, owner="mina")
    long = await store.create("jeff", title="workshop", start_time=at(2, 9), end_time=at(4, 12))

    found = await store.list_events("jeff", span(4, 0), span(6, 0))
    assert [e.title for e in found] == [long.title, early.title, late.title]
    assert await store.list_events("jeff", span(5, 16), span(5, 18)) == []
    # half-open range: an event ending exactly at the start is not in it
    assert [e.title for e in await store.list_events("jeff", span(4, 10), span(4, 11))] == ["workshop"]


async def test_moving_an_event_moves_it_in_the_listing(store: RedisEventStore) -> None:
    event = await make(store, "1:1", 4, 9)
    moved = await store.update(event.event_id, start_time=at(8, 9), end_time=at(8, 10), title="1:1 (moved)")
    assert moved.updated_at >= event.updated_at and moved.created_at == event.created_at
    assert await store.list_events("jeff", span(4, 0), span(5, 0)) == []
    assert [e.title for e in await store.list_events("jeff", span(8, 0), span(9, 0))] == ["1:1 (moved)"]
    with pytest.raises(ValueError, match="not after"):
        await store.update(event.event_id, end_time=at(8, 8))
    with pytest.raises(TypeError, match="owner_id"):
        await store.update(event.event_id, owner_id="mina")


async def test_invite_adds_each_person_once(store: RedisEventStore) -> None:
    event = await make(store, "review", 4, 14, invitee_user_ids=["mina"])
    updated = await store.invite(event.event_id, ["seojun", "mina", "seojun"])
    assert updated.invitee_user_ids == ["mina", "seojun"]
    assert [e.event_id for e in await store.list_invited("seojun")] == [event.event_id]


async def test_concurrent_invites_are_all_kept(store: RedisEventStore) -> None:
    event = await make(store, "all hands", 4, 14)
    guests = [f"guest{i}" for i in range(10)]
    await asyncio.gather(*(store.invite(event.event_id, [g]) for g in guests))
    stored = await store.get(event.event_id)
    assert stored is not None and sorted(stored.invitee_user_ids) == sorted(guests)


async def test_replacing_invitees_drops_the_removed_ones_and_their_answers(store: RedisEventStore) -> None:
    event = await make(store, "offsite", 4, 9, invitee_user_ids=["mina", "seojun"])
    await store.set_availability(event.event_id, "mina", ["2026-12-02"])
    updated = await store.update(event.event_id, invitee_user_ids=["seojun", "jiwoo"])
    assert updated.invitee_user_ids == ["seojun", "jiwoo"] and updated.guest_availability == {}
    assert await store.list_invited("mina") == []
    assert [e.title for e in await store.list_invited("jiwoo")] == ["offsite"]


async def test_guest_availability_is_saved_sorted_and_unique(store: RedisEventStore) -> None:
    event = await make(store, "dinner", 4, 19, invitee_user_ids=["mina"])
    saved = await store.set_availability(event.event_id, "mina", ["2026-12-03", "2026-12-01", "2026-12-03"])
    assert saved.guest_availability == {"mina": ["2026-12-01", "2026-12-03"]}


async def test_list_invited_is_sorted_by_start(store: RedisEventStore) -> None:
    second = await make(store, "second", 6, 9, invitee_user_ids=["mina"])
    first = await make(store, "first", 5, 9, owner="seojun", invitee_user_ids=["mina"])
    assert [e.event_id for e in await store.list_invited("mina")] == [first.event_id, second.event_id]
    assert await store.list_invited("nobody") == []


async def test_missing_events_raise_and_expired_ones_leave_the_indexes(
    store: RedisEventStore, redis: Redis
) -> None:
    for call in (
        store.update("evt_000000000000", title="x"),
        store.invite("evt_000000000000", ["mina"]),
        store.set_availability("evt_000000000000", "mina", []),
    ):
        with pytest.raises(EventNotFoundError):
            await call
    event = await make(store, "gone", 4, 9, invitee_user_ids=["mina"])
    await redis.delete(keys.event(event.event_id))  # as if it had expired
    assert await store.list_events("jeff", span(1, 0), span(30, 0)) == []
    assert await store.list_invited("mina") == []
    assert await redis.zcard(keys.owner_events("jeff")) == 0
    assert await redis.scard(keys.invited_events("mina")) == 0


async def test_an_event_long_past_is_still_kept_a_day(redis: Redis) -> None:
    store = RedisEventStore(redis, clock=lambda: datetime(2030, 1, 1, tzinfo=UTC))
    event = await make(store, "history", 4, 9)
    assert 0 < await redis.ttl(keys.event(event.event_id)) <= keys.EVENT_MIN_TTL_S


async def test_times_are_aware_and_read_back_as_they_were_written(
    store: RedisEventStore, redis: Redis
) -> None:
    event = await make(store, "review", 4, 14, invitee_user_ids=["mina"], availability_deadline=at(3, 18))
    cancelled = await store.cancel(event.event_id, reason="moved online")
    assert cancelled.cancelled_at == now() and cancelled.availability_deadline == at(3, 18)
    stored = json.loads(await redis.get(keys.event(event.event_id)) or "{}")
    assert stored["availability_deadline"] == "2026-12-03T18:00:00+09:00"
    assert stored["cancelled_at"] == "2026-11-26T01:49:00+00:00"
    assert await store.get(event.event_id) == cancelled
    with pytest.raises(ValueError, match="timezone"):  # a time without an offset is not an event time
        await store.create("jeff", title="x", start_time=datetime(2026, 12, 3, 10), end_time=at(3, 11))
