"""A server tool that runs past its time limit ends with a failed "timed out" result the model sees."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, ToolFailed, WrapperToolset
from pydantic_ai.toolsets import ToolsetTool

from .agent_deps import AgentDeps
from .marks import bounds_its_own_time


class ToolTimedOut(ToolFailed):
    """A tool call that did not end within its time limit (the model is told it timed out)."""


@dataclass
class TimeLimitToolset(WrapperToolset[AgentDeps]):
    """Bounds every call to ``timeout_s``, except tools marked as bounding their own time."""

    timeout_s: float

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        try:
            async with asyncio.timeout(None if bounds_its_own_time(tool.tool_def) else self.timeout_s):
                return await super().call_tool(name, tool_args, ctx, tool)
        except TimeoutError:
            message = f"{name} timed out after {self.timeout_s:g} s; the service did not answer in time"
            raise ToolTimedOut(message) from None
