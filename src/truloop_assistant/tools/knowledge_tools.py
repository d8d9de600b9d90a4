"""Knowledge base tools: answers about the company come from its documents, not from the model's guesses."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, RunContext

from ..backends.knowledge import KnowledgeHit
from .agent_deps import AgentDeps
from .arguments import SearchQuery

knowledge_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

NOTHING_FOUND = (
    "No document in the knowledge base matched this query. Tell the user you could not find it in the "
    "company documents (you may first retry once with other key words or the other language); "
    "do not guess or make up a policy."
)


class KnowledgeSearchResult(BaseModel):
    """What a knowledge base search found."""

    results: list[KnowledgeHit] = Field(description="matching documents, best first")
    note: str | None = Field(default=None, description="set when nothing matched: what to tell the user")


@knowledge_toolset.tool
async def search_knowledge_base(
    ctx: RunContext[AgentDeps],
    # Annotated, not `= Field(...)`: pydantic-ai treats a parameter with any default as optional
    query: Annotated[
        SearchQuery,
        Field(description="The question or its key words, in the user's language"),
    ],
    limit: Annotated[int, Field(ge=1, le=10)] = 3,
) -> KnowledgeSearchResult:
    """The company's documents (policies, expenses, vacation, IT, onboarding): how things work
    there."""
    hits = await ctx.deps.require_backends().knowledge.search(query, limit=limit)
    return KnowledgeSearchResult(results=hits, note=None if hits else NOTHING_FOUND)
