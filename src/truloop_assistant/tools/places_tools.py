"""Places search: restaurants, cafés, shops and other places, with ratings and opening status."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints
from pydantic_ai import FunctionToolset, RunContext, ToolFailed

from ..backends.places import Place, PlacesError
from ..i18n import is_korean
from .agent_deps import AgentDeps

places_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

NOT_CONFIGURED = (
    "places search is not configured on this server (no Google Places API key), "
    "so I can't look up places right now"
)

MAX_PLACE_CHARS = 200
"""Longest query (and place name) Google Places gets from the model."""
_Where = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_PLACE_CHARS)]


class PlacesResult(BaseModel):
    places: list[Place] = Field(description="Best match first; empty when nothing was found")


def query_language(text: str) -> str | None:
    """``ko`` for text with Hangul, else None (the provider decides)."""
    return "ko" if is_korean(text) else None


@places_toolset.tool
async def search_places(
    ctx: RunContext[AgentDeps],
    query: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_PLACE_CHARS),
    ],
    near: Annotated[
        _Where | None,
        Field(description="Area or landmark; for 'home' or 'the office' see search_memories first"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=10)] = 5,
) -> PlacesResult:
    """Find places (restaurants, cafés, shops, sights) with address, rating and map link."""
    places = ctx.deps.require_backends().places
    if places is None:
        raise ToolFailed(NOT_CONFIGURED)
    try:
        found = await places.search(query, near=near or None, limit=limit, language=query_language(query))
    except PlacesError as exc:
        raise ToolFailed(f"places search failed: {exc}") from None
    return PlacesResult(places=found)
