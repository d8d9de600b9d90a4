"""One remote MCP server of ``TRULOOP_MCP_SERVERS``."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, StringConstraints

Pattern = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class McpServer(BaseModel):
    """One entry of ``TRULOOP_MCP_SERVERS``: a remote MCP server (Streamable HTTP) whose tools join ours."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: AnyHttpUrl = Field(repr=False)
    """May carry secrets (a user and password, a token in the query): shown as :attr:`shown_url`."""
    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{0,19}$")
    """Its tools are named ``<prefix>_<tool>`` (lower-case letters and digits, so the name stays clear)."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Sent with every request to the server (e.g. an ``Authorization`` header: left out of the repr)."""
    confirm: list[str] = Field(default_factory=list)
    """Shell-style patterns (``delete_*``) of its own tool names that always need the user's
    confirmation, even a tool the server marks read-only."""
    no_confirm: list[Pattern] | None = None
    """Shell-style patterns (``get_*``) of its own tool names that run without the user's
    confirmation. Every other tool needs it, unless the server marks it read-only (the MCP
    ``readOnlyHint`` tool annotation); ``confirm`` still applies. Patterns match the unprefixed
    name, whatever its case."""
    refresh_s: float = Field(default=60.0, gt=0)
    """How long its tool list is used before it is asked for again."""

    @property
    def shown_url(self) -> str:
        """The URL as logs and ``doctor`` show it: ``scheme://host:port/path``, no user, password or query."""
        parts = urlsplit(str(self.url))
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"

    def redact(self, text: str) -> str:
        """``text`` (an error message, say) with the URL's secret parts taken out."""
        full = str(self.url)
        parts = urlsplit(full)
        text = text.replace(full, self.shown_url)
        userinfo = parts.netloc.rpartition("@")[0]
        for secret in (f"{userinfo}@" if userinfo else "", f"?{parts.query}" if parts.query else ""):
            if secret:
                text = text.replace(secret, "")
        return text
