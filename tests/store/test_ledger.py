"""The ledger keeps a conversation's newest turns, each once, in the order they started."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from truloop_assistant.store import keys
from truloop_assistant.store.ledger import Ledger, LedgerTurn


async def test_the_newest_turns_are_kept_each_once_whatever_their_steps_rewrite(
    redis: Redis, monkeypatch: Any
) -> None:
    monkeypatch.setattr(keys, "LEDGER_TURNS", 3)
    ledger = Ledger(redis)
    for n, turn_id in enumerate(["m1", "m2", "m3", "m4"]):
        await ledger.save(
            "ch-1", LedgerTurn(turn_id=turn_id, user_id="jeff", state="paused", started_at=100.0 + n)
        )
    assert [t.turn_id for t in await ledger.turns("ch-1")] == ["m4", "m3", "m2"]

    # A turn's later steps rewrite its record: still once, in its place, and the keys still expire.
    await ledger.save("ch-1", LedgerTurn(turn_id="m3", user_id="jeff", state="answered", started_at=102.0))
    assert [(t.turn_id, t.state) for t in await ledger.turns("ch-1")] == [
        ("m4", "paused"),
        ("m3", "answered"),
        ("m2", "paused"),
    ]
    tag = keys.conversation_tag("ch-1")
    for key in (keys.ledger(tag), keys.ledger_order(tag)):
        assert 0 < await redis.ttl(key) <= keys.LEDGER_TTL_S

    # A step of a turn already dropped (the oldest) does not bring it back over a newer one.
    await ledger.save("ch-1", LedgerTurn(turn_id="m1", user_id="jeff", state="answered", started_at=100.0))
    assert [t.turn_id for t in await ledger.turns("ch-1")] == ["m4", "m3", "m2"]
    assert await ledger.load("ch-1", "m1") is None
