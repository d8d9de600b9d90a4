"""Marks a tool carries where it is defined (pydantic-ai tool metadata), for wrappers to act on."""

from __future__ import annotations

from typing import Any

from pydantic_ai.tools import ToolDefinition

CHANGES: dict[str, Any] = {"changes": True}
"""A tool that changes something: it runs at most once per call, even when its step runs again."""
DESTRUCTIVE: dict[str, Any] = {**CHANGES, "destructive": True}
"""A tool that changes data or reaches other people: it also runs only after the user's yes."""


ASKS_ITSELF: dict[str, Any] = {"asks_itself": True}
"""A destructive tool that prepares what it will do (e.g. writes a message) and asks for the yes itself,
raising ``ApprovalRequired(metadata=...)``; the gate's wrapper leaves it to the tool."""


EDITED = "edited_by_user"
"""The key of an approval's metadata (and of the tool's result) that names the arguments the person
changed in the confirmation dialog before approving."""


DECLARED: dict[str, Any] = {"declared": True}
"""A device tool the user's app declared (not one of the server's own)."""
CONFIRMED_DECLARED: dict[str, Any] = {**DECLARED, "confirmed": True}
"""A declared tool the app marked to confirm: a call whose arguments fit asks the user's yes (an
``interaction.confirm`` dialog), and goes to the phone only after it."""
DEVICE: dict[str, Any] = {"device": True}
"""A built-in device tool: it runs on the user's phone (the call is deferred)."""

KEEPS_EMPTY = "keeps_empty"
"""The key of a tool's metadata naming optional arguments for which an empty value says something
(``available_dates: []``: none of the dates): they are not dropped as empty arguments are."""

OWN_TIME_BOUND: dict[str, Any] = {"own_time_bound": True}
"""A tool that bounds its own time (a nested model run): the tool time limit (``time_limits.py``) does
not apply."""


def is_destructive(tool_def: ToolDefinition) -> bool:
    """Whether the tool was defined with ``metadata=DESTRUCTIVE``."""
    return bool((tool_def.metadata or {}).get("destructive"))


def asks_itself(tool_def: ToolDefinition) -> bool:
    """Whether the tool was defined with ``ASKS_ITSELF`` in its metadata."""
    return bool((tool_def.metadata or {}).get("asks_itself"))


def asks_first(tool_def: ToolDefinition) -> bool:
    """Whether a call of the tool waits for the user's yes: destructive tools and confirmed declared ones."""
    return is_destructive(tool_def) or bool((tool_def.metadata or {}).get("confirmed"))


def changes_something(tool_def: ToolDefinition) -> bool:
    """Whether the tool was defined with ``metadata=CHANGES`` (or ``DESTRUCTIVE``)."""
    return bool((tool_def.metadata or {}).get("changes"))


def bounds_its_own_time(tool_def: ToolDefinition) -> bool:
    """Whether the tool was defined with ``OWN_TIME_BOUND`` in its metadata."""
    return bool((tool_def.metadata or {}).get("own_time_bound"))


def is_declared(tool_def: ToolDefinition) -> bool:
    """Whether the tool is one the user's app declared."""
    return bool((tool_def.metadata or {}).get("declared"))


def runs_on_device(tool_def: ToolDefinition) -> bool:
    """Whether calls of the tool go to the user's phone (built-in device tools and declared ones)."""
    metadata = tool_def.metadata or {}
    return bool(metadata.get("device") or metadata.get("declared"))


def from_mcp(tool_def: ToolDefinition) -> bool:
    """Whether the tool is an MCP server's."""
    return bool((tool_def.metadata or {}).get("mcp"))
