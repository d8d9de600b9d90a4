"""Integrators' tool callbacks are told about each server tool call that runs here: when it starts,
and when it ends (``on_tool_end`` with its result, ``on_tool_error`` with its error).

Calls that do not run here are told about by the ledger writer when they are sent and answered:
device calls, and calls that wait for the user's yes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, WrapperToolset
from pydantic_ai.toolsets import ToolsetTool

from .agent_deps import AgentDeps, ToolRun
from .call_records import observed
from .callbacks import ToolCallbacks, ToolEvent
from .marks import is_destructive, runs_on_device


@dataclass
class CallbackToolset(WrapperToolset[AgentDeps]):
    """Tells ``ctx.deps.callbacks`` about the calls that run here (none when there are no callbacks).

    The events carry the call as the ledger keeps it, timed and ended as this wrapper saw it.
    """

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        callbacks = _told(ctx, tool, tool_args)
        if callbacks is None:
            return await super().call_tool(name, tool_args, ctx, tool)
        run = ToolRun(tool=name, args=dict(tool_args), started_at=time.time())
        callbacks.started(_event(run, ctx))
        try:
            return await observed(run, super().call_tool(name, tool_args, ctx, tool))
        finally:
            if run.outcome not in ("deferred", "needs_approval"):  # told when sent and answered
                callbacks.ended(_event(run, ctx))


def _told(
    ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps], args: dict[str, Any]
) -> ToolCallbacks | None:
    """The callbacks to tell about this call, if it runs here: device calls, and gated calls still
    waiting for the user's yes, are told about when they are sent (the ledger writer does that)."""
    callbacks = ctx.deps.callbacks
    if not callbacks:
        return None
    waits = is_destructive(tool.tool_def) and not ctx.tool_call_approved
    if runs_on_device(tool.tool_def) or (waits and not ctx.deps.allows_always(tool.tool_def, args)):
        return None
    return callbacks


def _event(run: ToolRun, ctx: RunContext[AgentDeps]) -> ToolEvent:
    deps = ctx.deps
    return ToolEvent(
        call=run.record(ctx.tool_call_id or ""),
        turn_id=deps.turn_id,
        channel_url=deps.channel_url,
        user_id=deps.user_id,
    )
