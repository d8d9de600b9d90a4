"""Conversation history stays bounded: by message count and by size, cut only between turns."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from truloop_assistant.store.history import History
from truloop_assistant.store.keys import HISTORY_MAX_BYTES
from truloop_assistant.store.turns import TurnStore


def turn(i: int, size: int = 10) -> list[Any]:
    return [ModelRequest(parts=[UserPromptPart(f"q{i}")]), ModelResponse(parts=[TextPart("x" * size)])]


async def test_history_keeps_the_newest_turns_within_count_and_size(redis: Any) -> None:
    history = History(redis, max_messages=6)
    store = TurnStore(redis, pending_ttl_s=60, history=history)
    await store.finish("c", "u", [m for i in range(10) for m in turn(i)], turn_id="m1", paused=False)
    kept = await history.load("c", "u")
    assert [m.parts[0].content for m in kept[::2]] == ["q7", "q8", "q9"]

    big = [m for i in range(3) for m in turn(i, size=HISTORY_MAX_BYTES // 2)]
    await store.finish("c", "u", big, turn_id="m1", paused=False)
    kept = await history.load("c", "u")
    assert [m.parts[0].content for m in kept[::2]] == ["q2"]  # the two older big turns were cut
    assert isinstance(kept[0].parts[0], UserPromptPart)  # it still starts with a user prompt


async def test_one_turn_bigger_than_the_cap_keeps_its_question_and_answer(redis: Any) -> None:
    history = History(redis, max_messages=40)
    store = TurnStore(redis, pending_ttl_s=60, history=history)
    request = ModelRequest(parts=[UserPromptPart("q")])
    huge = [ModelResponse(parts=[TextPart("x" * (HISTORY_MAX_BYTES // 2))]) for _ in range(3)]
    await store.finish(
        "c", "u", [request, *huge, ModelResponse(parts=[TextPart("final")])], turn_id="m1", paused=False
    )
    kept = await history.load("c", "u")
    assert [type(m).__name__ for m in kept] == ["ModelRequest", "ModelResponse"]
    assert kept[-1].parts[0].content == "final"


async def test_a_cut_never_leaves_a_result_whose_call_was_cut_off(redis: Any) -> None:
    """A message that cut a paused turn short shares its request with that turn's results."""
    history = History(redis, max_messages=3)
    store = TurnStore(redis, pending_ttl_s=60, history=history)
    call = ToolCallPart("get_calendar_events", {}, tool_call_id="call_1")
    superseded = ToolReturnPart("get_calendar_events", "Superseded: …", tool_call_id="call_1")
    messages = [
        ModelRequest(parts=[UserPromptPart("this week?")]),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[superseded, UserPromptPart("never mind, what time is it?")]),
        ModelResponse(parts=[TextPart("10:49")]),
    ]
    await store.finish("c", "u", messages, turn_id="m2", paused=False)
    kept = await history.load("c", "u")
    assert [type(p).__name__ for p in kept[0].parts] == ["UserPromptPart"]
    assert kept[0].parts[0].content == "never mind, what time is it?"
