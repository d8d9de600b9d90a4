"""Redis grows with conversations, not with traffic: a finished turn keeps only what late answers need."""

from __future__ import annotations

import secrets
from typing import Any

from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS, calendar_model
from truloop_assistant.store import keys
from truloop_assistant.store.turns import decode_record, encode_record

LONG_ANSWER = "x" * 20_000
"""A long answer makes a big history."""
LONG = 20_000
"""The longest a message may be in these tests (Sendbird's largest ``max_message_length``)."""


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
        # Before, each finished turn kept its own copy of the history (20,000 bytes and more); what stays
        # is the three turns' ledger (which model answered each, too), transcript and marks.
        assert others < 12 * 1024, others
        for turn in range(3):
            assert await h.redis.hgetall(keys.turn(tag, f"m{1000 + turn}")) == {b"state": b"done"}

        # What the contract needs stays: a late duplicate of an answered call is still a 200.
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 200 and r.json() == {"status": "duplicate"}


def calendar_then_prompts_seen() -> FunctionModel:
    """Ask for the calendar; once answered, say every prompt the run was given (and a long tail that
    does not compress, so a copy of the history would show)."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        prompts = [
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]
        return ModelResponse(parts=[TextPart(" | ".join(prompts) + " / " + secrets.token_hex(5_000))])

    return FunctionModel(fn)


async def test_a_paused_turn_keeps_what_its_run_added_not_a_copy_of_the_history(start_server: Any) -> None:
    tag = keys.conversation_tag("ch-1")
    async with start_server(model=calendar_then_prompts_seen(), sendbird_max_message_chars=LONG) as h:
        h.sendbird.max_message_length = LONG  # each answer one message, to read whole
        for turn in range(3):
            await h.user_says(f"calendar {turn}")
            await h.answer((await h.rpc_requests(turn + 1))[-1]["id"], result={"events": []})
            await h.replies(turn + 1)
        await h.user_says("calendar 3")
        await h.rpc_requests(4)
        await h.idle()
        history = await h.redis.get(keys.history(tag, "jeff"))
        assert len(history) > 30_000  # three answers of 10 000 characters that do not compress
        raw = await h.redis.hget(keys.turn(tag, "m1003"), "record")
        assert len(raw) < 2_000, len(raw)  # not the history again
        paused = decode_record(raw)
        assert paused.history_len == 12 and paused.messages == ""  # 3 turns of 4 messages
        assert "calendar 3" in paused.added and "calendar 0" not in paused.added

        # Resumed, its run starts from the history again: every prompt is there.
        await h.answer((await h.rpc_requests(4))[-1]["id"], result={"events": []})
        reply = (await h.replies(4))[-1]
        assert reply.text.split(" / ")[0] == " | ".join(f"calendar {i}" for i in range(4))

        # A new message cuts a paused turn short: its run starts from the history and the cut turn.
        await h.user_says("calendar 4")
        await h.rpc_requests(5)
        await h.user_says("calendar 5")
        reply = (await h.replies(5))[-1]
        assert reply.text.split(" / ")[0] == " | ".join(f"calendar {i}" for i in range(6))


async def test_a_turn_an_earlier_release_paused_with_all_its_messages_still_resumes(
    start_server: Any,
) -> None:
    tag = keys.conversation_tag("ch-1")
    async with start_server(model=calendar_then_prompts_seen(), sendbird_max_message_chars=LONG) as h:
        h.sendbird.max_message_length = LONG  # each answer one message, to read whole
        await h.user_says("calendar 0")
        await h.answer((await h.rpc_requests(1))[-1]["id"], result={"events": []})
        await h.replies(1)
        await h.user_says("calendar 1")
        [_, rpc] = await h.rpc_requests(2)
        await h.idle()
        # As that release kept it: the whole run in ``messages``, the history included.
        key = keys.turn(tag, "m1001")
        paused = decode_record(await h.redis.hget(key, "record"))
        history = ModelMessagesTypeAdapter.validate_json(await h.redis.get(keys.history(tag, "jeff")))
        whole = [*history, *ModelMessagesTypeAdapter.validate_json(paused.added)]
        earlier = paused.model_copy(
            update={
                "messages": ModelMessagesTypeAdapter.dump_json(whole).decode(),
                "added": "",
                "history_len": 0,
            }
        )
        await h.redis.hset(key, "record", encode_record(earlier))

        await h.answer(rpc["id"], result={"events": []})
        reply = (await h.replies(2))[-1]
        assert reply.text.split(" / ")[0] == "calendar 0 | calendar 1"
        # Its history is whole afterwards: the next turn sees both earlier prompts.
        await h.user_says("calendar 2")
        await h.answer((await h.rpc_requests(3))[-1]["id"], result={"events": []})
        reply = (await h.replies(3))[-1]
        assert reply.text.split(" / ")[0] == "calendar 0 | calendar 1 | calendar 2"
