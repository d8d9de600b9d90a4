"""An event that fails every attempt is kept for operators, with its error, and counted."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio import Redis

from tests.factories import make_drainer
from tests.support import make_settings
from truloop_assistant.channels.base import InboundMessage
from truloop_assistant.channels.local import LocalChannel
from truloop_assistant.i18n import texts
from truloop_assistant.metrics import DEAD_LETTERS
from truloop_assistant.operations.inspection import as_text, conversation_report
from truloop_assistant.pipeline.conversations import MAX_EVENT_ATTEMPTS
from truloop_assistant.pipeline.delivery import Deliverer
from truloop_assistant.store.inbox import MessageEvent
from truloop_assistant.store.outbox import Outbox
from truloop_assistant.store.streamed import StreamedMessages


class Broken:
    """A turn runner whose step raises every time, as a bug would."""

    def __init__(self) -> None:
        self.runs = 0

    async def handle_message(
        self, message: InboundMessage, consumed: Any = None, follow_ups: Any = ()
    ) -> None:
        self.runs += 1
        raise RuntimeError("the step broke")

    async def resume(self, channel_url: str, turn_id: str, consumed: Any = None) -> None:
        raise AssertionError("no resume here")


async def test_an_event_that_keeps_failing_becomes_a_dead_letter(
    redis: Redis, redis_url: str, sendbird: Any
) -> None:
    settings = make_settings(redis_url, sendbird.url, channel="local")
    broken = Broken()
    drainer = make_drainer(redis, settings, runner=broken)
    event = MessageEvent(eid="e-1", message_id="41", user_id="jeff", text="비밀 메시지")
    _, owner = await drainer.inbox.push("dead-1", event)
    assert owner is not None
    before = DEAD_LETTERS._value.get()
    for _ in range(MAX_EVENT_ATTEMPTS):  # each job attempt raises; saq would retry it
        with pytest.raises(RuntimeError):
            await drainer.drain("dead-1", owner)  # the job's retries carry the same owner
    await drainer.drain("dead-1", owner)  # the next attempt gives it up and goes on

    assert broken.runs == MAX_EVENT_ATTEMPTS
    assert DEAD_LETTERS._value.get() == before + 1
    report = await conversation_report(redis, drainer.ledger, "dead-1")
    [dead] = report.dead_letters
    assert dead["error"] == f"given up after {MAX_EVENT_ATTEMPTS} attempts: RuntimeError('the step broke')"
    assert dead["event"] == {
        "kind": "message",
        "eid": "e-1",
        "user_id": "jeff",
        "message_id": "41",
        "chars": 6,
    }
    assert report.inbox == []  # the conversation goes on with its next messages
    assert "비밀" not in as_text(report)  # what people wrote is not shown


class BrokenMidAnswer(Broken):
    """A step that had begun to stream its answer into the channel when it broke, every time."""

    def __init__(self, channel: LocalChannel, streamed: StreamedMessages) -> None:
        super().__init__()
        self.channel = channel
        self.streamed = streamed

    async def handle_message(
        self, message: InboundMessage, consumed: Any = None, follow_ups: Any = ()
    ) -> None:
        if self.runs == 0:
            message_id = await self.channel.post_streamed(
                message.channel_url, "The first sentence of", dedup_id="m41:0:stream:0", streaming=True
            )
            assert message_id is not None
            await self.streamed.note(message.channel_url, message.turn_id, 0, 0, message_id)
        await super().handle_message(message, consumed)


async def test_a_turn_given_up_mid_answer_finishes_its_half_message_with_the_apology(
    redis: Redis, redis_url: str, sendbird: Any
) -> None:
    settings = make_settings(redis_url, sendbird.url, channel="local")
    channel = LocalChannel(redis, bot_user_id=settings.sendbird_bot_user_id)
    streamed = StreamedMessages(redis)
    broken = BrokenMidAnswer(channel, streamed)
    drainer = make_drainer(
        redis,
        settings,
        runner=broken,
        streamed=streamed,
        deliverer=Deliverer(Outbox(redis, pending_ttl_s=60), channel, streamed=streamed),
    )
    event = MessageEvent(eid="e-1", message_id="41", user_id="jeff", text="what about the week?")
    _, owner = await drainer.inbox.push("dead-2", event)
    assert owner is not None
    for _ in range(MAX_EVENT_ATTEMPTS):
        with pytest.raises(RuntimeError):
            await drainer.drain("dead-2", owner)
    await drainer.drain("dead-2", owner)  # given up: its half message says the turn failed

    [shown] = await channel.messages("dead-2")
    assert shown["message"] == texts.SERVER_ERROR("en")
    assert shown["data"] == '{"streaming":false}'
    assert await streamed.unfinished("dead-2", "m41") == {}  # nothing is left to finish
