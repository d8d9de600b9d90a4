"""Tools of remote MCP servers (``TRULOOP_MCP_SERVERS``), joining the server tools.

Each server's tools are named ``<prefix>_<tool>``. Every one of them is marked destructive, so it
goes through the confirmation gate like the server's own, unless its own name matches one of the
server's ``no_confirm`` patterns or the server marks it read-only (the MCP ``readOnlyHint`` tool
annotation); a tool whose name matches a ``confirm`` pattern is confirmed in any case. Patterns
match the unprefixed name whatever its case. The agent wraps them like every toolset (time limits
and failures become tool results; a confirmed call runs once).

A server that is down costs only its own tools: listing them gives none (and is tried again a
little later, without delaying the turns in between), a call that cannot reach it fails as a tool
result the model can explain. One log line says when a server goes away, and one when it is back.
The tool list is kept for ``refresh_s`` seconds, then asked for again.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import time
from dataclasses import replace
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolFailed
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.toolsets import AbstractToolset, PrefixedToolset, ToolsetTool

from ..config import McpServer
from .agent_deps import AgentDeps
from .marks import DESTRUCTIVE

log = logging.getLogger("truloop_assistant.tools.mcp")

LIST_TIMEOUT_S = 5.0
"""Listing a server's tools may take this long before the server counts as down."""
RETRY_DOWN_S = 10.0
"""A server that is down is asked again after this long, then twice as long each time it still is
(up to ``RETRY_DOWN_MAX_S``); turns in between go on without its tools."""
RETRY_DOWN_MAX_S = 60.0


class McpServerTools(AbstractToolset[AgentDeps]):
    """One MCP server's tools, under their own names (``mcp_toolsets`` adds the prefix)."""

    def __init__(self, server: McpServer, *, reserved: frozenset[str] = frozenset()) -> None:
        self.server = server
        self.reserved = reserved
        """Names (with the prefix) the server defines itself: such a tool is left out."""
        self.mcp: MCPToolset[AgentDeps] = MCPToolset(
            str(server.url),
            id=f"mcp-{server.prefix}",
            headers=dict(server.headers) or None,
            tool_error_behavior="failed",
            cache_tools=False,
        )
        self.descriptions: dict[str, str] = {}
        """Prefixed tool name -> its description (the confirmation dialog shows it)."""
        self._tools: dict[str, ToolsetTool[AgentDeps]] | None = None
        self._fresh_until = 0.0
        self._retry_at = 0.0
        self._retry_s = RETRY_DOWN_S
        self._down = False
        self._lock = asyncio.Lock()

    @property
    def id(self) -> str:
        return f"mcp-{self.server.prefix}"

    @property
    def label(self) -> str:
        return f"MCP server {self.server.prefix!r} ({self.server.shown_url})"

    async def __aenter__(self) -> McpServerTools:
        # Nothing to open for a run: the server is reached when its tools are listed or called, so a
        # server that is down never fails the run itself.
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        return None

    async def get_tools(self, ctx: RunContext[AgentDeps]) -> dict[str, ToolsetTool[AgentDeps]]:
        if self._tools is not None and time.monotonic() < self._fresh_until:
            return self._tools
        async with self._lock:
            now = time.monotonic()
            if self._tools is not None and now < self._fresh_until:
                return self._tools
            if now < self._retry_at:
                return {}
            try:
                async with asyncio.timeout(LIST_TIMEOUT_S):
                    listed = await self.mcp.get_tools(ctx)
            except Exception as exc:
                self._went_down(exc)
                return {}
            self._tools = self._marked(listed)
            self._fresh_until = time.monotonic() + self.server.refresh_s
            if self._down or not self.descriptions:
                log.info("%s: %d tools: %s", self.label, len(self._tools), ", ".join(sorted(self._tools)))
            self._down = False
            self._retry_s = RETRY_DOWN_S
            self.descriptions = {
                f"{self.server.prefix}_{name}": tool.tool_def.description or ""
                for name, tool in self._tools.items()
            }
            return self._tools

    def _marked(self, listed: dict[str, ToolsetTool[AgentDeps]]) -> dict[str, ToolsetTool[AgentDeps]]:
        """The tools to offer, those that need a confirmation marked destructive; clashes left out."""
        tools = {}
        for name, tool in listed.items():
            if f"{self.server.prefix}_{name}" in self.reserved:
                log.warning("%s: tool %r is left out: the server has a tool of that name", self.label, name)
                continue
            metadata = {**(tool.tool_def.metadata or {}), "mcp": self.server.prefix}
            if needs_confirmation(self.server, name, read_only=says_read_only(tool.tool_def.metadata)):
                metadata |= DESTRUCTIVE
            tools[name] = replace(tool, tool_def=replace(tool.tool_def, metadata=metadata))
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps], tool: ToolsetTool[AgentDeps]
    ) -> Any:
        try:
            return await self.mcp.call_tool(name, tool_args, ctx, tool)
        except (ToolFailed, ModelRetry):  # the tool itself failed: the server is fine
            raise
        except Exception as exc:
            self._went_down(exc)
            raise ToolFailed(
                f"{self.server.prefix}_{name} could not run: the {self.server.prefix} service did not "
                "answer. Tell the user it is unavailable right now."
            ) from None

    def _went_down(self, exc: BaseException) -> None:
        """Forget the tools and ask again later (a little later each time). Logged once per outage."""
        self._tools = None
        self._fresh_until = 0.0
        self._retry_at = time.monotonic() + self._retry_s
        self._retry_s = min(self._retry_s * 2, RETRY_DOWN_MAX_S)
        if not self._down:
            reason = self.server.redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            log.warning(
                "%s is unreachable (%s): its tools are left out until it answers", self.label, reason[:200]
            )
        self._down = True


def needs_confirmation(server: McpServer, name: str, *, read_only: bool = False) -> bool:
    """Whether the server's tool ``name`` (its own name, unprefixed) waits for the user's yes:
    always when a ``confirm`` pattern matches it; else unless a ``no_confirm`` pattern matches it or
    the server says it is read-only (``read_only``)."""
    if _matches(name, server.confirm):
        return True
    return not (read_only or _matches(name, server.no_confirm or []))


def _matches(name: str, patterns: list[str]) -> bool:
    """Whether a shell-style pattern matches the name, whatever the case of either."""
    return any(fnmatch.fnmatchcase(name.casefold(), pattern.casefold()) for pattern in patterns)


def says_read_only(metadata: dict[str, Any] | None) -> bool:
    """Whether an MCP tool's annotations (as pydantic-ai keeps them in its metadata, by their wire
    names) say it does not modify its environment (``readOnlyHint``)."""
    annotations = (metadata or {}).get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def mcp_toolsets(
    servers: list[McpServer], *, reserved: frozenset[str] = frozenset()
) -> list[tuple[McpServerTools, AbstractToolset[AgentDeps]]]:
    """Each configured server's tools, and the toolset that offers them as ``<prefix>_<tool>``."""
    out: list[tuple[McpServerTools, AbstractToolset[AgentDeps]]] = []
    for server in servers:
        tools = McpServerTools(server, reserved=reserved)
        out.append((tools, PrefixedToolset(tools, server.prefix)))
    return out
