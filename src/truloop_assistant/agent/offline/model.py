"""A deterministic, rule-based model for keyless development (``TRULOOP_MODEL=offline``).

It picks tools from a few Korean and English intents (``intents``) and words its answers
from the tool results (``phrasing``), so the dev server shows real flows without an LLM. A request
about an event it has not seen yet (cancel it, give a guest's dates) takes two steps: look the
events up, then act on the one meant (``events``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition

from ...i18n import Language, language_of
from ...i18n import offline as say
from ...tools.marks import from_mcp, is_declared
from ..context import zone_named_in
from .events import follow_up
from .files import files_not_seen, without_files
from .intents import choose, without_addressee
from .phrasing import describe

WORD_PAUSE_S = 0.03
"""The pause between two streamed words of the offline model's answer."""
WRITING_S = 1.5
"""The longest the offline model takes to write one answer when it streams."""


def build_offline_model(*, timezone: ZoneInfo, clock: Callable[[], datetime] | None = None) -> FunctionModel:
    """Build the offline model; ``clock`` (aware, default now in UTC) decides what "this week" is."""
    now: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))

    def offline(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Answer from the last tool results, or pick a tool (or a capability reply) from the prompt."""
        prompt, files = without_files(_latest_prompt(messages))
        lang = language_of(prompt)
        last = messages[-1] if messages else None
        asked = isinstance(last, ModelRequest) and any(p.part_kind == "user-prompt" for p in last.parts)
        if files and not prompt and asked:
            return ModelResponse(parts=[TextPart(files_not_seen(files, lang))])
        zone = zone_named_in(info.instructions) or timezone  # the person's zone, when the server says it
        tools = {t.name for t in info.function_tools}
        # A new message that arrived while the phone still owed answers comes with the cut calls'
        # results: it is the message that needs answering.
        if isinstance(last, ModelRequest) and not any(p.part_kind == "user-prompt" for p in last.parts):
            results = [
                p for p in last.parts if p.part_kind in ("tool-return", "retry-prompt", "retry-feedback")
            ]
            if results:
                step = follow_up(
                    without_addressee(prompt), results, messages, tools, now().astimezone(zone), lang
                )
                if step is not None:
                    return ModelResponse(parts=[step])
                return ModelResponse(parts=[TextPart("\n".join(describe(p, lang, zone) for p in results))])
        outside = [t for t in info.function_tools if is_declared(t) or from_mcp(t)]
        if call := outside_tool_call(prompt, outside, lang):
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[choose(prompt, lang, tools, now().astimezone(zone), messages)])

    async def offline_stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        """The same answer, streamed: its text a word at a time, as a model writes it (so the dev page
        shows an answer growing), its tool calls whole."""
        response = offline(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                pieces = re.findall(r"\S+\s*|\s+", part.content)
                pause = min(WORD_PAUSE_S, WRITING_S / max(len(pieces), 1))
                for n, piece in enumerate(pieces):
                    if n:
                        await asyncio.sleep(pause)
                    yield piece
            elif isinstance(part, ToolCallPart):
                call = DeltaToolCall(part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id)
                yield {index: call}

    return FunctionModel(offline, stream_function=offline_stream, model_name="offline")


def outside_tool_call(prompt: str, tools: Sequence[ToolDefinition], lang: Language) -> ToolCallPart | None:
    """A call of a tool from outside the server (app-declared, or an MCP server's) named in the prompt.

    The tool with the most words of its name (4 letters or more) in the prompt is called: "what is my
    current location?" calls a declared ``get_current_location``, "delete customer c-17" an MCP
    ``crm_delete_customer``. The offline model cannot fill a schema it has never seen: a tool with
    one required text argument gets the prompt's last word that is not in the tool's name
    (``customer_id="c-17"``); device tools get their notification.
    """
    tokens = re.findall(r"[\w-]+", prompt.lower())
    best, best_score = None, 0
    for tool in tools:
        named = {w for w in tool.name.split("_") if len(w) >= 4}
        if (score := len(named & set(tokens))) > best_score:
            best, best_score = tool, score
    if best is None:
        return None
    schema = best.parameters_json_schema
    properties: dict[str, Any] = schema.get("properties", {})
    args: dict[str, Any] = {}
    if "notification_message" in properties:
        args["notification_message"] = say.CHECKING_PHONE(lang)
    texts = [p for p in schema.get("required", []) if p != "notification_message"]
    rest = [t for t in tokens if t not in best.name.split("_")]
    if len(texts) == 1 and properties.get(texts[0], {}).get("type") == "string" and rest:
        args[texts[0]] = rest[-1]
    return ToolCallPart(best.name, args)


def _latest_prompt(messages: Sequence[ModelMessage]) -> str:
    """The text of the most recent user prompt in the history."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    content = part.content
                    return (
                        content
                        if isinstance(content, str)
                        else " ".join(c for c in content if isinstance(c, str))
                    )
    return ""
