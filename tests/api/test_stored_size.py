"""What a conversation keeps in Redis: no copies of the instructions, a small paused turn."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS, ON_STANDALONE_AND_CLUSTER
from truloop_assistant.store import keys
from truloop_assistant.store.turns import decode_record

pytestmark = ON_STANDALONE_AND_CLUSTER

PAUSED_BYTES_MAX = 8 * 1024
"""What a paused conversation may keep in Redis beyond its history (the turn, its calls, marks)."""


class Calendar:
    """Asks the phone for the calendar, then answers; remembers the instructions it was given."""

    def __init__(self) -> None:
        self.instructions: list[str] = []

    def model(self) -> FunctionModel:
        def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.instructions.append(info.instructions or "")
            if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
                return ModelResponse(parts=[TextPart("You have a standup on Tuesday.")])
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

        return FunctionModel(fn)


async def conversation_keys(redis: Any, channel: str) -> dict[str, int]:
    """Every key of the channel's conversation with its ``MEMORY USAGE`` in bytes."""
    tag = keys.conversation_tag(channel)
    found = {}
    async for key in redis.scan_iter(match=f"*{tag}*", count=1000):
        found[key.decode()] = int(await redis.memory_usage(key) or 0)
    return found


async def test_the_instructions_are_sent_every_time_but_never_stored(start_server: Any) -> None:
    calendar = Calendar()
    async with start_server(model=calendar.model()) as h:
        await h.user_says("what's on my calendar?", channel="size")
        (request,) = await h.rpc_requests(1, channel="size")
        sentence = calendar.instructions[0].strip().splitlines()[0]
        assert len(sentence) > 20  # the agent's own instructions reached the model
        paused = await conversation_keys(h.redis, "size")
        tag = keys.conversation_tag("size")
        record = decode_record(await h.redis.hget(keys.turn(tag, "m1000"), "record"))
        assert "what's on my calendar?" in record.added and sentence not in record.added

        beyond_history = sum(size for key, size in paused.items() if ":history:" not in key)
        assert beyond_history <= PAUSED_BYTES_MAX, paused

        await h.answer(request["id"], result={"events": []})
        await h.replies(1, channel="size")
        await h.idle()
        history = await h.redis.get(keys.history(tag, "jeff"))
        assert history is not None and b"what's on my calendar?" in history
        assert sentence.encode() not in history

        await h.user_says("and next week?", channel="size")
        await h.rpc_requests(2, channel="size")
        assert sentence in calendar.instructions[-1]  # a later turn is still told them
