"""The device tools the user's app declared (``PUT /api/v1/agent/client-tools``).

They are offered in that user's turns only, and work like the built-in device tools: a call whose
arguments fit the declared schema raises ``CallDeferred`` (it goes to the phone as a JSON-RPC
request with the declared method); one that does not goes back to the model to fix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic_ai import CallDeferred, ModelRetry, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from ..protocol.declarations import schema_problem
from .agent_deps import AgentDeps
from .marks import DECLARED

_ANY_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class DeclaredToolset(AbstractToolset[AgentDeps]):
    """The calling user's declared tools (none when their app declared none)."""

    def __init__(
        self,
        *,
        max_retries: int,
        reserved: frozenset[str] = frozenset(),
        reserved_prefixes: Sequence[str] = (),
    ) -> None:
        self.max_retries = max_retries
        self.reserved = reserved
        self.reserved_prefixes = tuple(f"{p}_" for p in reserved_prefixes)
        """The server's own tool names: a declaration made before the server had one of them keeps
        working, without that tool (two tools of one name would fail every run)."""

    @property
    def id(self) -> str:
        return "declared"

    async def get_tools(self, ctx: RunContext[AgentDeps]) -> dict[str, ToolsetTool[AgentDeps]]:
        declaration = ctx.deps.declaration
        if declaration is None:
            return {}
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=tool.name,
                    description=tool.description,
                    parameters_json_schema=tool.model_parameters(),
                    metadata=DECLARED,
                ),
                max_retries=self.max_retries,
                args_validator=_ANY_ARGS,
            )
            for tool in declaration.tools
            if tool.name not in self.reserved and not tool.name.startswith(self.reserved_prefixes)
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        schema = json.dumps(tool.tool_def.parameters_json_schema, separators=(",", ":"), sort_keys=True)
        if problem := schema_problem(schema, tool_args):
            raise ModelRetry(f"the arguments do not fit {name}'s parameters: {problem}")
        raise CallDeferred()
