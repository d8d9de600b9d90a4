"""A conversation whose drain job was lost is drained anyway, by whichever worker looks first."""

from __future__ import annotations

import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.pipeline.intake import Intake
from truloop_assistant.pipeline.queue import TurnQueue, make_queue
from truloop_assistant.runtime.recovery import rescue_due
from truloop_assistant.store import keys
from truloop_assistant.store.drains import Drains
from truloop_assistant.store.inbox import DELIVER, Inbox, MessageEvent
from truloop_assistant.store.outbox import SettleOut

pytestmark = ON_STANDALONE_AND_CLUSTER


def echo() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for p in messages[-1].parts if isinstance(p, UserPromptPart))
        return ModelResponse(parts=[TextPart(f"echo {prompt}")])

    return FunctionModel(fn)


async def test_an_event_pushed_by_a_process_that_died_before_queuing_its_job_is_answered(
    start_server: Any,
) -> None:
    async with start_server(model=echo(), worker_heartbeat_s=1) as h:
        inbox, drains = Inbox(h.redis, owner_ttl_s=1), Drains(h.redis, owner_ttl_s=1)
        # What the webhook does, up to the moment its process dies: watched and pushed, no job queued.
        await drains.watch("lost-1")
        status, owner = await inbox.push(
            "lost-1", MessageEvent(message_id="9001", user_id="jeff", text="still there?"), dedup_id="9001"
        )
        assert status == "queued" and owner is not None
        [reply] = await h.replies(1, channel="lost-1", timeout=15)
        assert reply.text == "echo still there?"
        await h.idle()
        assert len(h.sendbird.in_channel("lost-1")) == 1


async def test_one_rescue_per_conversation_however_many_scanners_look(redis: Any, redis_url: str) -> None:
    queue = make_queue(redis_url, "rescue-race")
    try:
        inbox, drains = Inbox(redis, owner_ttl_s=5), Drains(redis, owner_ttl_s=5)
        await inbox.push("c-1", MessageEvent(message_id="1", user_id="u", text="hi"))
        await redis.delete(keys.owner(keys.conversation_tag("c-1")))  # its owner died
        await drains.watch("c-1", after_s=0)
        turns = TurnQueue(queue, heartbeat_s=5)
        rescued = [await rescue_due(drains, turns) for _ in range(5)]
        assert sum(rescued) == 1  # the first scan took it over; the others saw its new owner
        assert (await drains.backlog("c-1")).owner is not None
        assert await redis.llen(f"{keys.queue('rescue-race')}:queued") == 1
        # A conversation with nothing waiting is forgotten.
        await drains.watch("idle-1", after_s=0)
        await rescue_due(drains, turns)
        assert await redis.zscore(keys.drains(), "idle-1") is None
    finally:
        await queue.disconnect()


async def test_an_answer_coming_while_a_drain_lets_go_is_run_at_once_not_when_its_claim_lapses(
    redis: Any, redis_url: str
) -> None:
    """A drain whose last delivery left only updates Sendbird would not take yet lets the conversation
    go: a device's last answer pushed just before (its owner still set, so no job was queued) keeps
    the claim, and a watch planned for the updates' next try is not put off by that push."""
    queue = make_queue(redis_url, "let-go-race")
    try:
        inbox, drains = Inbox(redis, owner_ttl_s=15), Drains(redis, owner_ttl_s=15)
        intake = Intake(inbox, drains, TurnQueue(queue, heartbeat_s=15))
        tag = keys.conversation_tag("c-2")
        await redis.rpush(
            keys.outbox(tag),
            SettleOut(
                dedup_id="settle:c1", call_id="c1", state="answered", method="calendar.getEvents", lang="en"
            ).model_dump_json(),
        )
        owner = "drain:busy"
        await redis.set(keys.owner(tag), owner)
        assert await inbox.next("c-2", owner) == DELIVER  # only the update is left, and it waits
        await drains.watch("c-2", after_s=1)  # its next try

        await intake.resume("c-2", "t1")  # the last answer: its owner is set, so no job is queued
        assert await redis.llen(f"{keys.queue('let-go-race')}:queued") == 0
        assert not await inbox.release_if_quiet("c-2", owner)  # the drain goes on and runs it
        assert await redis.get(keys.owner(tag)) == owner.encode()
        assert [c for c, _ in await drains.due(time.time() + 2)] == ["c-2"]  # the try is not put off

        await redis.delete(keys.inbox(tag))
        assert await inbox.release_if_quiet("c-2", owner)  # nothing came: let go
        assert await redis.get(keys.owner(tag)) is None
    finally:
        await queue.disconnect()
