"""How much the member agent sends a model before the conversation: its tools and its instructions.

Measured on the request itself: the member agent makes one step against a Chat Completions model
whose HTTP transport keeps the body and answers at once (nothing leaves the process). The tools are
counted as the body's ``tools`` written as compact JSON, the instructions as the text of its system
messages (the agent's own and those of a turn: who the user is, their zone, the time).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx2
from pydantic_ai.models import override_allow_model_requests
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ..tools.agent_deps import AgentDeps
from .agents import MemberAgent, build_member_agent
from .context import turn_instructions
from .models import as_served

MAX_TOOLS_CHARS = 9_500
"""Most characters the member agent's tool definitions may take (compact JSON)."""
MAX_INSTRUCTIONS_CHARS = 3_500
"""Most characters its instructions (system messages) may take."""
CHARS_PER_TOKEN = 4
"""A rough rule for English and JSON; text in Korean takes more tokens per character."""

_ZONE = ZoneInfo("Asia/Seoul")
_NOW = datetime(2026, 3, 9, 14, 0, tzinfo=_ZONE)
_ANSWER = {
    "id": "size",
    "object": "chat.completion",
    "created": 0,
    "model": "size",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


@dataclass(frozen=True)
class RequestSize:
    """What a model request of the member agent carries besides the conversation."""

    tools: int
    """Tools of the request, in number."""
    tools_chars: int
    """Characters of their definitions as compact JSON."""
    instructions_chars: int
    """Characters of the system messages."""

    @property
    def approx_tokens(self) -> int:
        return round((self.tools_chars + self.instructions_chars) / CHARS_PER_TOKEN)

    def summary(self) -> str:
        return (
            f"request size: {self.tools} tools in {self.tools_chars:,} chars (at most {MAX_TOOLS_CHARS:,}), "
            f"instructions {self.instructions_chars:,} chars (at most {MAX_INSTRUCTIONS_CHARS:,}), "
            f"about {self.approx_tokens:,} tokens"
        )


async def member_request_size(agent: MemberAgent | None = None) -> RequestSize:
    """The size of the member agent's first model request of a turn (``agent``: one already built)."""
    return size_of(await member_request(agent))


async def member_request(agent: MemberAgent | None = None) -> dict[str, Any]:
    """The body of the member agent's first Chat Completions request of a turn."""
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=_ANSWER)

    # httpx2: the model SDKs' own copy of httpx, which they take a client of
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        provider = OpenAIProvider(base_url="http://size.invalid/v1", api_key="size", http_client=http)
        model = OpenAIChatModel("gpt-4o-mini", provider=provider)
        member = agent or build_member_agent(model, tool_timeout_s=30.0)
        deps = AgentDeps(user_id="u_minjun", channel_url="size", timezone=_ZONE, clock=lambda: _NOW)
        # Allowed even where tests forbid model requests: this one never leaves the process.
        with override_allow_model_requests(True), member.override(model=as_served(model)):
            await member.run(
                "hello",
                deps=deps,
                instructions=turn_instructions(_ZONE, deps.user_id, now=_NOW, name="Kim Minjun"),
            )
    return bodies[0]


def size_of(body: dict[str, Any]) -> RequestSize:
    """The size of one Chat Completions request body."""
    tools = body.get("tools") or []
    system = [m for m in body["messages"] if m.get("role") in ("system", "developer")]
    return RequestSize(
        tools=len(tools),
        tools_chars=len(json.dumps(tools, ensure_ascii=False, separators=(",", ":"))),
        instructions_chars=sum(len(_text(m.get("content"))) for m in system),
    )


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
