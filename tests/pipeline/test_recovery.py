"""A conversation whose drain job was lost is drained anyway, by whichever worker looks first."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.pipeline.queue import TurnQueue, make_queue
from truloop_assistant.runtime.recovery import rescue_due
from truloop_assistant.store import keys
from truloop_assistant.store.drains import Drains
from truloop_assistant.store.inbox import Inbox, MessageEvent

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
