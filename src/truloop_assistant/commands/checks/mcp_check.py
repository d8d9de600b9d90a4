"""Does each MCP server of ``TRULOOP_MCP_SERVERS`` answer and list its tools?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .outcome import Check

if TYPE_CHECKING:
    from ...config import McpServer

MCP_TIMEOUT_S = 5.0


def check_mcp(server: McpServer) -> Check:
    """The MCP server answers and lists its tools (as the worker will see them, with the prefix)."""
    import asyncio

    from pydantic_ai.mcp import MCPToolset

    async def tools() -> list[str]:
        toolset: MCPToolset[None] = MCPToolset(str(server.url), headers=dict(server.headers) or None)
        async with asyncio.timeout(MCP_TIMEOUT_S):
            return [tool.name for tool in await toolset.list_tools()]

    name = f"mcp {server.prefix}"
    try:
        names = asyncio.run(tools())
    except Exception as exc:
        reason = server.redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return Check(
            name,
            "FAIL",
            f"cannot list the tools of {server.shown_url} ({reason[:200]}): start it or fix "
            "TRULOOP_MCP_SERVERS; "
            "until then the assistant works without its tools",
        )
    listed = ", ".join(f"{server.prefix}_{n}" for n in names) or "none"
    return Check(name, "ok", f"{server.shown_url} answers with {len(names)} tools: {listed}")
