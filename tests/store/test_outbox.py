"""The outbox keeps a conversation's newest undelivered messages while its deliveries fail."""

from __future__ import annotations

from redis.asyncio import Redis

from truloop_assistant.store import keys
from truloop_assistant.store.outbox import Outbox, TextOut


async def test_a_failed_delivery_keeps_the_newest_messages(redis: Redis) -> None:
    outbox = Outbox(redis, pending_ttl_s=3600)
    key = keys.outbox(keys.conversation_tag("ch-1"))
    answers = [TextOut(dedup_id=f"m{i}", text=f"answer {i}").model_dump_json() for i in range(205)]
    await redis.rpush(key, *answers)
    assert await outbox.failed("ch-1") == 1
    assert await outbox.failed("ch-1") == 2  # failures in a row are counted
    assert await redis.llen(key) == keys.OUTBOX_MAX
    head = await outbox.head("ch-1")
    assert head is not None and isinstance(head[1], TextOut) and head[1].text == "answer 5"
    # A delivery that went through starts the count again.
    await outbox.pop("ch-1", head[0])
    assert await outbox.failed("ch-1") == 1
