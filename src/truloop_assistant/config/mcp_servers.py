"""One remote MCP server of ``TRULOOP_MCP_SERVERS``."""

from __future__ import annotations

from typing import Annotated

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, StringConstraints

Pattern = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class McpServer(BaseModel):
    """One entry of ``TRULOOP_MCP_SERVERS``: a remote MCP server (Streamable HTTP) whose tools join ours."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: AnyHttpUrl
    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{0,19}$")
    """Its tools are named ``<prefix>_<tool>`` (lower-case letters and digits, so the name stays clear)."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Sent with every request to the server (e.g. an ``Authorization`` header: left out of the repr)."""
    confirm: list[str] = Field(default_factory=list)
    """Shell-style patterns (``delete_*``) of its own tool names that need the user's confirmation."""
    no_confirm: list[Pattern] | None = None
    """When given, an allow-list: every tool whose own name matches none of these patterns (``get_*``)
    needs the user's confirmation too; ``[]`` confirms every tool. ``confirm`` still applies."""
    refresh_s: float = Field(default=60.0, gt=0)
    """How long its tool list is used before it is asked for again."""
