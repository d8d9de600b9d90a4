"""Marks a tool carries where it is defined (pydantic-ai tool metadata), for wrappers to act on."""

from __future__ import annotations

from typing import Any

from pydantic_ai.tools import ToolDefinition

DESTRUCTIVE: dict[str, Any] = {"destructive": True}
"""A tool that changes data or reaches other people: it runs only after the user's yes."""


def is_destructive(tool_def: ToolDefinition) -> bool:
    """Whether the tool was defined with ``metadata=DESTRUCTIVE``."""
    return bool((tool_def.metadata or {}).get("destructive"))
