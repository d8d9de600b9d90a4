"""The server's own tools as one toolset, whose list of tools is made once per process.

pydantic-ai lists every toolset's tools at each step of each run, and a ``FunctionToolset`` builds a
run context and a tool definition per tool every time; each toolset of an agent also adds its own
turn through every wrapper and through the concurrent gathering of toolsets. The server's tools do
not change between runs (none has a ``prepare`` function: what a run may use is decided by the
wrappers, per run), so they are one ``FunctionToolset`` here and their list is made once (for each
retry budget a run lists them with), then handed out as it is.

The list carries what the model is sent: a tool's return schema is dropped where it was made, as
pydantic-ai would drop it before every request (no tool asks for it to be sent), and its parameters
schema is written compactly (:mod:`.sent_schema`). An optional argument sent empty is dropped before
validation (:mod:`.empty_arguments`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import AbstractToolset, CombinedToolset, FunctionToolset, RunContext, Tool
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ToolsetTool

from .agent_deps import AgentDeps
from .empty_arguments import EmptyOptionalsDropped
from .marks import KEEPS_EMPTY
from .sent_schema import sent_schema


class ServerToolset(FunctionToolset[AgentDeps]):
    """The tools of several function toolsets, listed once (``tools``: each toolset's ``Tool``)."""

    def __init__(self, tools: Iterable[Tool[AgentDeps]]) -> None:
        super().__init__(list(tools))
        self._listed: dict[int, dict[str, ToolsetTool[AgentDeps]]] = {}
        self._fixed = all(tool.prepare is None for tool in self.tools.values())
        """Whether the list depends on nothing a run changes (a ``prepare`` function could)."""

    async def get_tools(self, ctx: RunContext[AgentDeps]) -> dict[str, ToolsetTool[AgentDeps]]:
        if not self._fixed:
            return {name: offered(tool) for name, tool in (await super().get_tools(ctx)).items()}
        listed = self._listed.get(ctx.max_retries)
        if listed is None:
            listed = {name: offered(tool) for name, tool in (await super().get_tools(ctx)).items()}
            self._listed[ctx.max_retries] = listed
        return dict(listed)


def offered(tool: ToolsetTool[AgentDeps]) -> ToolsetTool[AgentDeps]:
    """The tool as it is offered: its definition as the model gets it, empty optional arguments dropped."""
    parameters = tool.tool_def.parameters_json_schema
    kept = set((tool.tool_def.metadata or {}).get(KEEPS_EMPTY, ()))
    optional = set(parameters.get("properties", {})) - set(parameters.get("required", [])) - kept
    return replace(
        tool,
        tool_def=as_sent(tool.tool_def),
        args_validator=EmptyOptionalsDropped(tool.args_validator, optional),
    )


def as_sent(tool_def: ToolDefinition) -> ToolDefinition:
    """The definition as the model gets it: the description on one line, the parameters in few
    characters (:func:`.sent_schema`), the return schema only for a tool that asks for it."""
    return_schema = tool_def.return_schema if tool_def.include_return_schema else None
    # A docstring's line breaks are the source's layout, not the model's business.
    description = " ".join(tool_def.description.split()) if tool_def.description else tool_def.description
    return replace(
        tool_def,
        description=description,
        parameters_json_schema=sent_schema(tool_def.parameters_json_schema),
        return_schema=return_schema,
    )


def merged(
    toolsets: Sequence[AbstractToolset[AgentDeps]],
    *,
    keep: Callable[[ToolDefinition], bool] = lambda tool_def: True,
) -> ServerToolset:
    """The tools of ``toolsets`` (function toolsets, and combinations of them) as one
    :class:`ServerToolset`, with only those ``keep`` is true for."""
    tools: dict[str, Tool[AgentDeps]] = {}

    def walk(toolset: AbstractToolset[Any]) -> None:
        if type(toolset) is CombinedToolset:
            for inner in toolset.toolsets:
                walk(inner)
        elif type(toolset) is FunctionToolset and _plain(toolset):
            for name, tool in toolset.tools.items():
                if name in tools and tools[name] is not tool:
                    raise ValueError(f"two server tools are named {name!r}")
                if keep(tool.tool_def):
                    tools[name] = tool
        else:
            raise TypeError(f"{toolset.label} is not a plain function toolset")

    for toolset in toolsets:
        walk(toolset)
    return ServerToolset(tools.values())


def _plain(toolset: FunctionToolset[Any]) -> bool:
    """Whether the toolset adds nothing of its own to its tools' calls (its tools can move)."""
    return (
        toolset.max_retries is None
        and toolset.timeout is None
        and toolset.id is None
        # pydantic-ai's private ``_instructions`` (what its get_instructions reads), as pydantic-ai-slim
        # 2.68.x has it, which pyproject pins: re-read it before a bump.
        and not toolset._instructions
    )
