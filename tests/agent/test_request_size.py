"""What the member agent sends a model besides the conversation stays small: its tool definitions
and its instructions, measured on the Chat Completions request itself."""

from __future__ import annotations

from truloop_assistant.agent.request_size import (
    MAX_INSTRUCTIONS_CHARS,
    MAX_TOOLS_CHARS,
    member_request_size,
)


async def test_the_member_agents_tools_and_instructions_fit_their_budgets() -> None:
    size = await member_request_size()
    assert size.tools >= 20  # every member tool is in the request
    assert size.tools_chars <= MAX_TOOLS_CHARS, size.summary()
    assert size.instructions_chars <= MAX_INSTRUCTIONS_CHARS, size.summary()
    assert 0 < size.approx_tokens <= (MAX_TOOLS_CHARS + MAX_INSTRUCTIONS_CHARS) // 4
