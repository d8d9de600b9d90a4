"""Tools that change something run at most once per call, even when their step runs again.

A step runs again when its worker died after a tool ran, before the step was recorded. The
wrapper records a changing tool's result as soon as it returns (by the call's id and, for tools
that need no confirmation, by tool and arguments) and hands the recorded result back on a re-run
instead of calling the tool again: one event, one relayed message, one saved memory.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, WrapperToolset
from pydantic_ai.toolsets import ToolsetTool
from pydantic_core import to_json

from ..store.effects import arguments_key
from .agent_deps import AgentDeps
from .marks import changes_something, is_destructive

log = logging.getLogger("truloop_assistant.tools")


@dataclass
class OnceToolset(WrapperToolset[AgentDeps]):
    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        effects, deps = ctx.deps.effects, ctx.deps
        if effects is None or not deps.turn_id or not changes_something(tool.tool_def):
            return await super().call_tool(name, tool_args, ctx, tool)
        names = [f"call:{ctx.tool_call_id}"]
        if not (is_destructive(tool.tool_def) and ctx.tool_call_approved):
            # Confirmed calls keep their id across a re-run; others (those a standing approval lets
            # run at once among them) are asked of the model anew.
            names.append(arguments_key(name, tool_args))
        if (recorded := await effects.recorded(deps.channel_url, deps.turn_id, *names)) is not None:
            log.info(
                "tool %s id=%s already ran in turn %s: replaying its result",
                name,
                ctx.tool_call_id,
                deps.turn_id,
            )
            return json.loads(recorded)
        result = await super().call_tool(name, tool_args, ctx, tool)
        await effects.record(deps.channel_url, deps.turn_id, to_json(result).decode(), *names)
        return result
