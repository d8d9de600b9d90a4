"""What the tools see of long-term memory: a memory, the store's interface, and its one error."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel

from ...errors import ServiceError


class Memory(BaseModel):
    """A fact or preference a user asked the assistant to remember."""

    memory_id: str
    text: str
    created_at: str
    """ISO 8601, UTC."""
    score: float | None = None
    """Relevance to the search query (higher is better); None when not from a search."""


class MemoryBackendError(ServiceError):
    """The memory service failed or refused the request; the message says why, without secrets."""


class MemoryStore(Protocol):
    """Each user's memories: saved, searched, listed and forgotten only by that user."""

    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]:
        """The memories matching the query best, best first; an empty query lists the most recent."""
        ...

    async def save(self, user_id: str, text: str) -> Memory:
        """Remember a text for the user."""
        ...

    async def forget(self, user_id: str, memory_id: str) -> bool:
        """Delete one of the user's memories; False when the user has no memory with that id."""
        ...

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]:
        """The user's memories, newest first."""
        ...

    async def forget_all(self, user_id: str) -> int:
        """Delete every memory of the user (they asked for their data to be erased); how many went."""
        ...


def utcnow() -> datetime:
    """The current time in UTC (the stores take a clock so tests can set it)."""
    return datetime.now(UTC)
