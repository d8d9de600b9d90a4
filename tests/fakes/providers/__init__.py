"""Local stand-ins for the model provider APIs, one per API family pydantic-ai speaks."""

from .anthropic_messages import FakeAnthropic
from .openai_chat import FakeChatCompletions
from .openai_responses import FakeResponses
from .scripted import Prompt, Reply, Script, ScriptedProvider, ToolCall, ToolResult

FAMILIES: tuple[type[ScriptedProvider], ...] = (FakeChatCompletions, FakeResponses, FakeAnthropic)

__all__ = [
    "FAMILIES",
    "FakeAnthropic",
    "FakeChatCompletions",
    "FakeResponses",
    "Prompt",
    "Reply",
    "Script",
    "ScriptedProvider",
    "ToolCall",
    "ToolResult",
]
