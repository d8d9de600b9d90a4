"""What the member agent sends a model besides the conversation stays small: its tool definitions
and its instructions, measured on the Chat Completions request itself."""

from __future__ import annotations

import json

from truloop_assistant.agent.request_size import (
    MAX_INSTRUCTIONS_CHARS,
    MAX_TOOLS_CHARS,
    member_request,
    member_request_size,
)


async def test_the_member_agents_tools_and_instructions_fit_their_budgets() -> None:
    size = await member_request_size()
    assert size.tools >= 20  # every member tool is in the request
    assert size.tools_chars <= MAX_TOOLS_CHARS, size.summary()
    assert size.instructions_chars <= MAX_INSTRUCTIONS_CHARS, size.summary()
    assert 0 < size.approx_tokens <= (MAX_TOOLS_CHARS + MAX_INSTRUCTIONS_CHARS) // 4


async def test_objects_are_closed_only_for_strict_tools_and_nothing_is_nullable() -> None:
    body = await member_request()
    strict = {t["function"]["name"] for t in body["tools"] if t["function"].get("strict")}
    closed = {t["function"]["name"] for t in body["tools"] if "additionalProperties" in json.dumps(t)}
    assert closed == strict and "get_calendar_events" in strict  # strict mode needs them closed
    assert {"create_event", "update_event", "search_users"}.isdisjoint(strict)
    assert '"type": "null"' not in json.dumps(body["tools"])
