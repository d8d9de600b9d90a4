"""Invitations and event notices that Sendbird keeps refusing with 429 (past the channel creation's
own retries) are kept in Redis and delivered later by the workers' scan: each once, in order per
person, across a worker restart or a worker that died holding them. A final refusal is still told at
once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.api.test_guest_journey import Script, call, confirmed, create_lunch
from tests.fakes.sendbird import FakeSendbird
from tests.support import Harness
from truloop_assistant.runtime.deliveries import PendingDeliveryScan
from truloop_assistant.services import Services
from truloop_assistant.store import keys
from truloop_assistant.store.pending_deliveries import PendingDeliveries

pytestmark = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)

GUESTS = ["guest-lee", "guest-kim"]
ALWAYS = 10_000
"""429s in a row: more than any call's retries."""
LATER = keys.PENDING_DELIVERY_RETRY_S + 1
"""Seconds after which a delivery that met a 429 is due again."""


async def deliver_due(h: Harness, at: float, *, scanners: int = 1) -> int:
    """Deliveries made by ``scanners`` workers of their own scanning all at once as if it were ``at``."""
    workers = [Services.create(h.settings) for _ in range(scanners)]
    try:
        scans = [PendingDeliveryScan(PendingDeliveries(s.redis), s.inviter()) for s in workers]
        return sum(await asyncio.gather(*(scan.send_due(now=at) for scan in scans)))
    finally:
        for s in workers:
            await s.aclose()


async def test_invitations_refused_with_429s_past_the_retries_are_delivered_later_each_once_in_order(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        sendbird.throttle("creation", ALWAYS)
        event = await create_lunch(h, script, guest_user_ids=GUESTS)
        assert all(event["invitations"][g].startswith("queued") for g in GUESTS), event["invitations"]
        # The change is queued behind the invitation, even for a person not tried again meanwhile.
        rename = call("update_event", event_id=event["event_id"], title="Team")
        await confirmed(h, script, "call it the team lunch", rename)
        [changed] = script.results["call it the team lunch"]
        assert all(changed.json()["told"][g].startswith("queued") for g in GUESTS), changed.json()
        await h.idle()
        assert all(h.direct_channel(g) is None for g in GUESTS)

        sendbird.throttle("creation", 0)  # Sendbird takes channel creations again
        assert await deliver_due(h, time.time() + LATER, scanners=3) == 4
        assert await deliver_due(h, time.time() + 2 * LATER) == 0
        for guest in GUESTS:
            channel = h.direct_channel(guest)
            assert channel is not None, guest
            invitation, notice = h.texts(channel)
            assert "Design lunch" in invitation and "Team" in notice, (invitation, notice)
        assert await h.redis.zcard(keys.pending_deliveries()) == 0


async def test_waiting_invitations_survive_a_restart_and_a_worker_that_died_holding_them(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        sendbird.throttle("creation", ALWAYS)
        event = await create_lunch(h, script, guest_user_ids=GUESTS)
        assert all(event["invitations"][g].startswith("queued") for g in GUESTS), event["invitations"]
        await h.idle()
    # The server stopped; a worker claims guest-lee, then dies before delivering anything.
    sendbird.throttle("creation", 0)
    now = time.time() + LATER
    assert await PendingDeliveries(h.redis).claim("guest-lee", at=now) is not None

    assert await deliver_due(h, now) == 1  # guest-kim; guest-lee is held by the dead worker
    assert h.direct_channel("guest-lee") is None
    assert await deliver_due(h, now + keys.PENDING_DELIVERY_LEASE_S + 1) == 1  # the claim lapsed
    for guest in GUESTS:
        channel = h.direct_channel(guest)
        assert channel is not None and len(h.texts(channel)) == 1, guest
    assert await h.redis.zcard(keys.pending_deliveries()) == 0


async def test_a_refusal_is_told_at_once_and_nothing_waits_for_it(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        # A chat user when the dialog was checked; gone by the time the channel is made.
        sendbird.channel_failures = [(400, {"error": True, "code": 400201, "message": '"User" not found.'})]
        event = await create_lunch(h, script, guest_user_ids=["guest-ghost"])
        assert event["invitations"]["guest-ghost"].startswith("not delivered: no such user: ")
        await h.idle()
        assert not await PendingDeliveries(h.redis).waiting("guest-ghost")
        assert await deliver_due(h, time.time() + LATER) == 0
