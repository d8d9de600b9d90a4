"""A tool that raises never crashes the run: the exception becomes a failed result the model sees.

The result names only the error's type; the details go to the log. ``ModelRetry`` (a fixable
argument problem), ``ToolFailed``, ``CallDeferred`` and ``ApprovalRequired`` pass through untouched:
they already say what the model is to see. Unknown tools and argument validation errors are
reported to the model as retry prompts by pydantic-ai before any tool runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ApprovalRequired, CallDeferred, ModelRetry, RunContext, ToolFailed, WrapperToolset
from pydantic_ai.toolsets import ToolsetTool

from .agent_deps import AgentDeps

log = logging.getLogger("truloop_assistant.tools")

PASS_THROUGH = (ModelRetry, ToolFailed, CallDeferred, ApprovalRequired)
"""What a tool may raise on purpose: passed on as it is."""


class ToolCrashed(ToolFailed):
    """A tool call that raised an unexpected exception (the model is told only its type)."""


@dataclass
class FailureResultToolset(WrapperToolset[AgentDeps]):
    """Turns an unexpected exception from a tool into a failed tool result, and logs it."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        try:
            return await super().call_tool(name, tool_args, ctx, tool)
        except PASS_THROUGH:
            raise
        except Exception as exc:
            log.exception("tool %s id=%s raised", name, ctx.tool_call_id)
            raise ToolCrashed(f"{name} failed ({type(exc).__name__}); the error was logged") from None
