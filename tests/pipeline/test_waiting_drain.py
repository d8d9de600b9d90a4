"""A drain that has just asked a device for something the device answers by itself waits a moment for
the answer: the resume runs in the same drain, without a job of its own. A person's dialog is not
waited for, a wait that ends lets go of the conversation, and whatever comes meanwhile wakes it."""

from __future__ import annotations

import asyncio
from typing import Any

from redis.asyncio import Redis

from tests.api.test_call_state import two_calendars
from tests.api.test_deferred_turn import approval_agent
from tests.support import ON_STANDALONE_AND_CLUSTER, calendar_model
from truloop_assistant.pipeline.conversations import WAIT_FOR_DEVICE_S
from truloop_assistant.store import keys

pytestmark = ON_STANDALONE_AND_CLUSTER

TAG = keys.conversation_tag("ch-1")


async def jobs_queued(redis: Redis, queue: str) -> int:
    """Drain jobs queued so far: saq keeps a finished job for ten minutes, a running one until it ends."""
    space = keys.queue(queue)
    return len([key async for key in redis.scan_iter(match=f"{space}:job:*", count=1000)])


async def until(condition: Any, *, within_s: float) -> float:
    """Seconds until ``condition()`` (a coroutine function) holds; fails after ``within_s``."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not await condition():
        assert loop.time() - start < within_s, f"not within {within_s} s"
        await asyncio.sleep(0.02)
    return loop.time() - start


async def test_a_prompt_answer_is_run_by_the_drain_that_asked(start_server: Any) -> None:
    async with start_server(model=calendar_model("nothing this week")) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        await until(lambda: h.redis.exists(keys.waiting(TAG)), within_s=5)  # the drain waits
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text == "nothing this week"
        await h.idle()
        assert await jobs_queued(h.redis, h.settings.queue_name) == 1  # the message's job, and no other
        assert await h.redis.exists(keys.owner(TAG), keys.waiting(TAG), keys.bell(TAG)) == 0


async def test_a_wait_that_ends_lets_go_and_a_late_answer_still_resumes(start_server: Any) -> None:
    async with start_server(model=calendar_model("nothing this week")) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        waited = await until(lambda: _let_go(h.redis), within_s=WAIT_FOR_DEVICE_S + 5)
        assert waited > WAIT_FOR_DEVICE_S / 2  # it did wait, and then gave the conversation up
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text == "nothing this week"
        assert await jobs_queued(h.redis, h.settings.queue_name) == 2  # the late answer took a job


async def test_a_persons_dialog_is_not_waited_for(start_server: Any) -> None:
    ran: list[dict[str, Any]] = []
    async with start_server(agent=approval_agent(ran)) as h:
        await h.user_says("wipe it")
        [rpc] = await h.rpc_requests(1)
        assert rpc["method"] == "interaction.confirm"
        await until(lambda: _let_go(h.redis), within_s=WAIT_FOR_DEVICE_S / 2)
        assert (await h.answer(rpc["id"], result={"confirmed": True})).status_code == 202
        await h.replies(1)
        assert ran == [{"scope": "calendar"}]


async def test_an_update_for_a_waiting_drain_goes_out_at_once(start_server: Any) -> None:
    async with start_server(model=two_calendars()) as h:
        await h.user_says("both calendars")
        first, second = await h.rpc_requests(2)
        await until(lambda: h.redis.exists(keys.waiting(TAG)), within_s=5)
        # One of two answered: its request's message is updated by the waiting drain, not after its wait.
        assert (await h.answer(first["id"], result={"events": []})).json()["remaining"] == 1
        loop = asyncio.get_running_loop()
        start = loop.time()
        [update] = await h.sendbird.wait_updates(1, "ch-1", timeout=5)
        assert loop.time() - start < WAIT_FOR_DEVICE_S / 2
        assert update.settled == {"id": first["id"], "state": "answered", "method": "calendar.getEvents"}
        # The drain went back to waiting, for what was left of its moment: the last answer is its too.
        assert (await h.answer(second["id"], result={"events": []})).json() == {"status": "resuming"}
        [reply] = await h.replies(1)
        assert reply.text == "both answered"
        await h.idle()
        assert await jobs_queued(h.redis, h.settings.queue_name) == 1


async def _let_go(redis: Redis) -> bool:
    """The conversation has no drain any more (nor one waiting)."""
    return await redis.exists(keys.owner(TAG), keys.waiting(TAG)) == 0


async def test_a_drain_stopped_while_waiting_lets_go_at_once(start_server: Any) -> None:
    async with start_server(model=calendar_model("nothing this week")) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        await until(lambda: h.redis.exists(keys.waiting(TAG)), within_s=5)
    # The server stopped (a deploy): its drain gave the conversation up, not only once its claim expires.
    assert await _let_go(h.redis)
    async with start_server(model=calendar_model("nothing this week")) as h:
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        [reply] = await h.replies(1, timeout=3)  # queued by the answer itself, not found by a scanner later
        assert reply.text == "nothing this week"
