"""A guest reached by phone can be erased by number (the admin API and ``guests erase``), and leaves
every event a while after it ends without being asked."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support import JWT_SECRET, ON_STANDALONE_AND_CLUSTER
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.events.redis import RedisEventStore
from truloop_assistant.commands import guests as guests_command
from truloop_assistant.runtime.phone_guests import forget_phone_guests_due
from truloop_assistant.store import keys

pytestmark = ON_STANDALONE_AND_CLUSTER

GUEST = "tel:+821055501234"


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def lunch(events: RedisEventStore, *, ended_days_ago: float | None = None) -> str:
    start = datetime.now(UTC) + timedelta(days=3)
    if ended_days_ago is not None:
        start = datetime.now(UTC) - timedelta(days=ended_days_ago, hours=1)
    event = await events.create(
        "jeff",
        title="Team lunch",
        start_time=start,
        end_time=start + timedelta(hours=1),
        invitee_user_ids=["mina"],
        guests={GUEST: "ko", "sora": "en"},
    )
    await events.set_availability(event.event_id, GUEST, ["2026-12-10"])
    await events.set_availability(event.event_id, "mina", ["2026-12-11"])
    return event.event_id


async def test_an_operator_erases_a_guest_by_the_number_as_written(start_server: Any) -> None:
    async with start_server() as h:
        events = RedisEventStore(h.redis)
        first, second = await lunch(events), await lunch(events)
        ops, jeff = issue_token(JWT_SECRET, "ops", role="admin"), issue_token(JWT_SECRET, "jeff")

        refused = await h.http.delete("/api/v1/admin/guests/010-5550-1234", headers=bearer(jeff))
        assert refused.status_code == 403 and (await events.get(first)).is_invited(GUEST)  # type: ignore[union-attr]

        bad = await h.http.delete("/api/v1/admin/guests/12", headers=bearer(ops))
        assert bad.status_code == 422 and "not a phone number" in bad.json()["error"]["message"]

        r = await h.http.delete("/api/v1/admin/guests/010-5550-1234", headers=bearer(ops))
        assert r.status_code == 200, r.text
        assert r.json()["guest"] == GUEST and r.json()["events"] == 2
        for event_id in (first, second):
            event = await events.get(event_id)
            assert event is not None and not event.is_invited(GUEST)
            assert GUEST not in event.guest_availability and GUEST not in event.guest_languages
            assert event.is_invited("sora") and event.guest_availability["mina"] == ["2026-12-11"]
        assert await events.list_invited(GUEST) == []
        again = await h.http.delete("/api/v1/admin/guests/+821055501234", headers=bearer(ops))
        assert again.status_code == 200 and again.json()["events"] == 0  # safe to repeat


async def test_guests_erase_on_the_command_line(
    start_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    async with start_server() as h:
        events = RedisEventStore(h.redis)
        event_id = await lunch(events)
        parser = argparse.ArgumentParser(prog="truloop-assistant")
        guests_command.add_parser(parser.add_subparsers(dest="command", required=True))

        bad = parser.parse_args(["guests", "erase", "010-555"])
        assert await asyncio.to_thread(guests_command.run, bad, h.settings) == 1
        assert "not a phone number" in capsys.readouterr().err
        assert (await events.get(event_id)).is_invited(GUEST)  # type: ignore[union-attr]

        args = parser.parse_args(["guests", "erase", "+82 10-5550-1234"])
        assert await asyncio.to_thread(guests_command.run, args, h.settings) == 0
        assert capsys.readouterr().out == f"erased {GUEST}: off 1 events, 0 conversations\n"
        assert not (await events.get(event_id)).is_invited(GUEST)  # type: ignore[union-attr]


async def test_guests_reached_by_phone_leave_an_event_thirty_days_after_it_ends(redis: Any) -> None:
    events = RedisEventStore(redis)
    recent, old = await lunch(events, ended_days_ago=29), await lunch(events, ended_days_ago=31)
    assert await forget_phone_guests_due(redis, events) == 1
    kept, forgotten = await events.get(recent), await events.get(old)
    assert kept is not None and kept.is_invited(GUEST)
    assert (
        forgotten is not None
        and not forgotten.is_invited(GUEST)
        and GUEST not in forgotten.guest_availability
    )
    assert forgotten.is_invited("sora") and forgotten.title == "Team lunch"  # the event stays its organizer's
    assert await forget_phone_guests_due(redis, events) == 0  # nothing due twice
    assert await redis.zscore(keys.phone_guests_due(), recent) is not None  # still due, later
