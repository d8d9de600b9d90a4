"""The confirmation gate: a tool that changes data or reaches people waits for the person's yes.

A call of such a tool raises ``ApprovalRequired`` (the server asks with an ``interaction.confirm``
dialog), unless a standing approval covers the call (the person said "always" to one like it:
``AgentDeps.standing``);
tools that ask themselves (with what they prepared for the dialog) are left to do so. When the person
changed arguments in the dialog, the tool runs with them (``ToolApproved(override_args=...)``) and
its result names what they changed, so the model can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_ai import ApprovalRequired, RunContext, ToolReturn, WrapperToolset
from pydantic_ai.toolsets import ToolsetTool

from .agent_deps import AgentDeps
from .marks import EDITED, asks_itself, is_destructive

EDITED_NOTE = (
    "The user changed these arguments in the confirmation dialog before approving; the tool ran with "
    "their values. Tell them what was done with their changes."
)


@dataclass
class ConfirmationGate(WrapperToolset[AgentDeps]):
    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        tool_def = tool.tool_def
        if is_destructive(tool_def) and not asks_itself(tool_def) and not ctx.tool_call_approved:
            if not ctx.deps.allows_always(tool_def, tool_args):
                raise ApprovalRequired
            ctx.deps.note_standing(ctx.tool_call_id)
        result = await super().call_tool(name, tool_args, ctx, tool)
        metadata = ctx.tool_call_metadata if ctx.tool_call_approved else None
        edited = metadata.get(EDITED) if isinstance(metadata, dict) else None
        return with_edits(result, edited) if edited else result


def with_edits(result: Any, edited: dict[str, Any]) -> Any:
    """The tool's result, with what the person changed before approving."""
    if isinstance(result, ToolReturn):
        return ToolReturn(
            return_value=with_edits(result.return_value, edited),
            content=result.content,
            metadata=result.metadata,
        )
    value = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    told = {EDITED: edited, "note": EDITED_NOTE}
    return {**value, **told} if isinstance(value, dict) else {"result": value, **told}
