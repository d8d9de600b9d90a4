"""Places search: restaurants, cafés, shops and other places, with ratings and opening status."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, ToolFailed

from ..backends.places import Place, PlacesError
from .deps import AgentDeps

places_toolset: FunctionToolset[AgentDeps] = FunctionToolset()

_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")

NOT_CONFIGURED = (
    "places search is not configured on this server (no Google Places API key), "
    "so I can't look up places right now"
)


class PlacesResult(BaseModel):
    places: list[Place] = Field(description="Best match first; empty when nothing was found")


def query_language(text: str) -> str | None:
    """``ko`` for text with Hangul, else None (the provider decides)."""
    return "ko" if _HANGUL.search(text) else None


@places_toolset.tool
async def search_places(
    ctx: RunContext[AgentDeps],
    query: Annotated[
        str,
        Field(min_length=1, max_length=200, description="What to look for, e.g. '조용한 카페' or 'ramen'"),
    ],
    near: str | None = Field(
        default=None, description="Where: a neighbourhood, city or landmark, e.g. '강남역' or 'Shibuya'"
    ),
    limit: int = Field(default=5, ge=1, le=10, description="How many places to return at most"),
) -> PlacesResult:
    """Search for places (restaurants, cafés, shops, sights ...) with address, rating and map link."""
    if not query.strip():
        raise ModelRetry("query is empty; say what kind of place to look for")
    places = ctx.deps.require_backends().places
    if places is None:
        raise ToolFailed(NOT_CONFIGURED)
    near = near.strip() if near and near.strip() else None
    try:
        found = await places.search(query.strip(), near=near, limit=limit, language=query_language(query))
    except PlacesError as exc:
        raise ToolFailed(f"places search failed: {exc}") from None
    return PlacesResult(places=found)
