"""What the tools see of the knowledge base: a search returning one hit per matching document."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from ...errors import ServiceError


class KnowledgeBaseError(ServiceError):
    """A folder or index file cannot be used; the message says which and why."""


class KnowledgeHit(BaseModel):
    """One matching document and its best passage."""

    title: str = Field(description="the document's title")
    path: str = Field(description="where the document lives: its path in the folder, or its Notion page path")
    url: str | None = Field(default=None, description="a link to the document (Notion), to cite")
    snippet: str = Field(description="the best-matching passage of the document")
    score: float = Field(
        description="relevance (BM25, fused with meaning when an embedding model is configured); higher is "
        "better, only comparable within one search"
    )


class KnowledgeBase(Protocol):
    """Searches the organisation's internal documents."""

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """The best-matching documents for a query, best first, at most ``limit``."""
        ...
