"""A deterministic, rule-based model for keyless development (``TRULOOP_MODEL=offline``).

It picks tools from a few Korean and English intents (``intents``) and words its answers
from the tool results (``phrasing``), so the dev server shows real flows without an LLM. A request
about an event it has not seen yet (cancel it, give a guest's dates) takes two steps: look the
events up, then act on the one meant (``events``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from ...i18n import Language, language_of
from ...i18n import offline as say
from ...tools.marks import is_declared
from ..context import zone_named_in
from .events import follow_up
from .intents import choose, without_addressee
from .phrasing import describe


def build_offline_model(*, timezone: ZoneInfo, clock: Callable[[], datetime] | None = None) -> FunctionModel:
    """Build the offline model; ``clock`` (aware, default now in UTC) decides what "this week" is."""
    now: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))

    def offline(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Answer from the last tool results, or pick a tool (or a capability reply) from the prompt."""
        prompt = _latest_prompt(messages)
        lang = language_of(prompt)
        zone = zone_named_in(info.instructions) or timezone  # the person's zone, when the server says it
        tools = {t.name for t in info.function_tools}
        last = messages[-1] if messages else None
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
        if call := declared_call(prompt, [t for t in info.function_tools if is_declared(t)], lang):
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[choose(prompt, lang, tools, now().astimezone(zone), messages)])

    return FunctionModel(offline, model_name="offline")


def declared_call(prompt: str, declared: Sequence[ToolDefinition], lang: Language) -> ToolCallPart | None:
    """A call of an app-declared tool when a word of its name (4 letters or more) is in the prompt.

    "what is my current location?" calls a declared ``get_current_location``, with no arguments but
    the notification (the offline model cannot fill a schema it has never seen).
    """
    words = set(re.findall(r"[a-z]+", prompt.lower()))
    for tool in declared:
        if any(len(w) >= 4 and w in words for w in tool.name.split("_")):
            return ToolCallPart(tool.name, {"notification_message": say.CHECKING_PHONE(lang)})
    return None


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
