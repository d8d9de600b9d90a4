"""The dev server's local channel changes a message in place as Sendbird's update does."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from tests.support import BOT
from truloop_assistant.channels.base import ChannelSendError
from truloop_assistant.channels.local import LocalChannel

GROWING = json.dumps({"streaming": True})
DONE = json.dumps({"streaming": False})


async def test_a_growing_answer_is_one_message_whose_text_and_data_change_in_place(redis: Redis) -> None:
    local = LocalChannel(redis, bot_user_id=BOT)
    first = await local.append("dev", user_id=BOT, message="Hello.", data=GROWING)
    seen = max(m["message_id"] for m in await local.messages("dev"))

    await local.update_text("dev", first["message_id"], "Hello. Your week is", data=GROWING)
    [changed] = await local.messages("dev", after=seen)
    assert (changed["message_id"], changed["message"], changed["data"]) == (
        first["message_id"],
        "Hello. Your week is",
        GROWING,
    )
    assert changed["updated_seq"] > seen and changed["custom_type"] == ""

    await local.update_text("dev", first["message_id"], "Hello. Your week is free.", data=DONE)
    [final] = await local.messages("dev")
    assert (final["message"], json.loads(final["data"])) == (
        "Hello. Your week is free.",
        {"streaming": False},
    )
    assert final["updated_seq"] > changed["updated_seq"]
    assert await local.messages("dev", after=final["updated_seq"]) == []


async def test_updating_a_message_that_is_not_there_is_an_error_not_a_new_message(redis: Redis) -> None:
    local = LocalChannel(redis, bot_user_id=BOT)
    with pytest.raises(ChannelSendError) as raised:
        await local.update_text("dev", 999, "late text", data=DONE)
    assert not raised.value.retryable
    assert await local.messages("dev") == []
