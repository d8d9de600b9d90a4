"""Redis grows with conversations, not with traffic: a finished turn keeps only what late answers need."""

from __future__ import annotations

from typing import Any

from tests.support import calendar_model
from truloop_assistant.store import keys

LONG_ANSWER = "x" * 20_000
"""A long answer makes a big history."""


async def test_a_finished_turn_keeps_its_state_not_a_copy_of_the_history(start_server: Any) -> None:
    async with start_server(model=calendar_model(LONG_ANSWER)) as h:
        for turn in range(3):
            await h.user_says(f"calendar {turn}")
            rpc = (await h.rpc_requests(turn + 1))[-1]
            await h.answer(rpc["id"], result={"events": []})
            await h.replies(turn + 1)
        await h.idle()

        tag = keys.conversation_tag("ch-1")
        history = int(await h.redis.memory_usage(keys.history(tag, "jeff")))
        others = 0
        async for key in h.redis.scan_iter(match=f"{keys.PREFIX}:{tag}:*"):
            if key.decode() != keys.history(tag, "jeff"):
                others += int(await h.redis.memory_usage(key) or 0)
        assert history > 3 * 20_000  # the three answers, once, in the conversation's history
        assert others < 8 * 1024, others  # before: each finished turn kept its own copy of the history
        for turn in range(3):
            assert await h.redis.hgetall(keys.turn(tag, f"m{1000 + turn}")) == {b"state": b"done"}

        # What the contract needs stays: a late duplicate of an answered call is still a 200.
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 200 and r.json() == {"status": "duplicate"}
