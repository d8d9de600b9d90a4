"""Accepting a message: the conversation is watched before its event is pushed (one round trip on a
standalone Redis, in that order), and a Redis that forgot the push script (a restart, a failover)
still takes the message."""

from __future__ import annotations

from typing import Any, cast

from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from tests.support import ON_STANDALONE_AND_CLUSTER

pytestmark = ON_STANDALONE_AND_CLUSTER


def echo() -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")]))


async def forget_scripts(redis: Redis) -> None:
    """As after a restart or a failover: every primary's script cache is empty."""
    if not isinstance(redis, RedisCluster):
        await redis.script_flush()
        return
    for node in cast(RedisCluster, redis).get_primaries():
        plain = Redis(host=node.host, port=node.port)
        try:
            await plain.script_flush()
        finally:
            await plain.aclose()


async def test_a_message_is_queued_even_after_redis_forgot_its_scripts(start_server: Any) -> None:
    async with start_server(model=echo()) as h:
        assert (await h.user_says("first", channel="ch-1")).json() == {"status": "queued"}
        await h.replies(1, channel="ch-1")

        await forget_scripts(h.redis)
        queued = await h.user_says("after a restart", channel="ch-2", message_id=500)
        assert queued.json() == {"status": "queued"}
        [reply] = await h.replies(1, channel="ch-2")
        assert reply.text == "ok"
        # Pushed once: Sendbird's re-send of it is known as one, and nothing runs twice.
        assert (await h.user_says("after a restart", channel="ch-2", message_id=500)).json() == {
            "status": "duplicate"
        }
        await h.idle()
        assert len(await h.replies(1, channel="ch-2")) == 1
