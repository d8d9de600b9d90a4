"""The device tools the user's app declared (``PUT /api/v1/agent/client-tools``).

They are offered in that user's turns only, and work like the built-in device tools: a call whose
arguments fit the declared schema raises ``CallDeferred`` (it goes to the phone as a JSON-RPC
request with the declared method); one that does not (a string over 1000 characters where a
pattern applies does not), or is too large to check in bounded time (:mod:`..protocol.check_work`),
goes back to the model to fix. A tool the app marked to confirm (the default unless it is
read-only) first raises ``ApprovalRequired``: the user sees the ``interaction.confirm`` dialog of
the confirmation gate, and only their yes sends the call.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ApprovalRequired, CallDeferred, ModelRetry, RunContext, WrapperToolset
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from ..protocol.declarations import DeclaredTool
from ..protocol.schema_checks import schema_problem
from .agent_deps import AgentDeps
from .marks import CONFIRMED_DECLARED, DECLARED, asks_first

_ANY_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
MAX_DEFINITIONS = 4096
"""Declared tools whose definitions are kept at once (all are dropped when there are more)."""


@dataclass
class DeclaredToolset(WrapperToolset[AgentDeps]):
    """The wrapped toolset's tools, and the calling user's declared tools beside them (none when
    their app declared none).

    A declared tool named like one of the wrapped toolset's is left out, as are ``reserved`` names
    and those with ``reserved_prefixes``: the server's own tool names, so that a declaration made
    before the server had one of them keeps working, without that tool (two tools of one name would
    fail every run). Each declared tool's definition is made once per process (a user's declaration
    is read on every step of their turns, parsed once per process).
    """

    max_retries: int = 1
    reserved: frozenset[str] = frozenset()
    reserved_prefixes: Sequence[str] = ()
    _definitions: dict[int, tuple[weakref.ref[DeclaredTool], ToolDefinition]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """``id`` of a declared tool -> the tool (to tell it from a later one at the same address) and the
    definition the model gets; shared by the copies a run makes of this toolset."""

    def __post_init__(self) -> None:
        self._prefixes = tuple(f"{p}_" for p in self.reserved_prefixes)

    @property
    def id(self) -> str:
        return "declared"

    async def get_tools(self, ctx: RunContext[AgentDeps]) -> dict[str, ToolsetTool[AgentDeps]]:
        tools = await super().get_tools(ctx)
        declaration = ctx.deps.declaration
        if declaration is None:
            return tools
        declared = {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=self._definition(tool),
                max_retries=self.max_retries,
                args_validator=_ANY_ARGS,
            )
            for tool in declaration.tools
            if tool.name not in self.reserved
            and tool.name not in tools
            and not tool.name.startswith(self._prefixes)
        }
        return {**tools, **declared} if declared else tools

    def _definition(self, tool: DeclaredTool) -> ToolDefinition:
        known = self._definitions.get(id(tool))
        if known is not None and known[0]() is tool:
            return known[1]
        if len(self._definitions) >= MAX_DEFINITIONS:
            self._definitions.clear()
        definition = ToolDefinition(
            name=tool.name,
            description=tool.description,
            parameters_json_schema=tool.model_parameters(),
            metadata=CONFIRMED_DECLARED if tool.needs_confirmation else DECLARED,
            toolset_id=self.id,  # as pydantic-ai marks a tool of a toolset with an id
        )
        self._definitions[id(tool)] = (weakref.ref(tool), definition)
        return definition

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        if tool.toolset is not self:
            return await super().call_tool(name, tool_args, ctx, tool)
        schema = json.dumps(tool.tool_def.parameters_json_schema, separators=(",", ":"), sort_keys=True)
        if problem := schema_problem(schema, tool_args):
            raise ModelRetry(f"the arguments do not fit {name}'s parameters: {problem}")
        if asks_first(tool.tool_def) and not ctx.tool_call_approved:
            # As the confirmation gate asks (agents.gated), once the arguments are known to fit.
            raise ApprovalRequired()
        raise CallDeferred()
