"""Places tool through an agent: what the model gets back is what the user hears."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, models

from tests.fakes.places import PLACES_KEY, FakePlaces
from tests.support import served
from tests.tools.support import calls, retried
from truloop_assistant.backends import Backends
from truloop_assistant.backends.places import GooglePlacesSearch, PlacesSearch
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.places_tools import places_toolset, query_language

SEOUL = ZoneInfo("Asia/Seoul")

models.ALLOW_MODEL_REQUESTS = False


async def ask(places: PlacesSearch | None, **args: Any) -> str:
    agent = Agent(calls("search_places", args), deps_type=AgentDeps, toolsets=[places_toolset])
    backends = Backends(users=None, events=None, knowledge=None, memory=None, places=places)  # type: ignore[arg-type]
    result = await agent.run(
        "hi", deps=AgentDeps(user_id="jeff", channel_url="c", backends=backends, timezone=SEOUL)
    )
    return result.output


@pytest.fixture
async def fake() -> AsyncIterator[FakePlaces]:
    async with served(FakePlaces()) as places:
        yield places


@pytest.fixture
async def google(fake: FakePlaces) -> AsyncIterator[GooglePlacesSearch]:
    search = GooglePlacesSearch(fake.url, PLACES_KEY)
    yield search
    await search.aclose()


async def test_not_configured_is_explained() -> None:
    answer = await ask(None, query="ramen")
    assert answer.startswith("failed:")
    assert "places search is not configured on this server (no Google Places API key)" in answer


async def test_results_name_the_places(fake: FakePlaces, google: GooglePlacesSearch) -> None:
    answer = await ask(google, query="라멘", near="강남역", limit=2)
    assert answer.startswith("success:")
    assert "라멘 near 강남역 #1" in answer and "라멘 near 강남역 #2" in answer
    assert "https://maps.google.com/?cid=1" in answer
    [(_, body)] = fake.requests
    assert body == {"textQuery": "라멘 near 강남역", "pageSize": 2, "languageCode": "ko"}


async def test_english_query_leaves_the_language_to_google(
    fake: FakePlaces, google: GooglePlacesSearch
) -> None:
    assert "ramen #1" in await ask(google, query="ramen")
    assert "languageCode" not in fake.requests[0][1]


async def test_nothing_found(google: GooglePlacesSearch) -> None:
    assert await ask(google, query="nothing like this") == 'success: {"places":[]}'


@pytest.mark.parametrize("status", [500, 403])
async def test_provider_errors_are_explained(
    fake: FakePlaces, google: GooglePlacesSearch, status: int
) -> None:
    fake.fail_with = status
    answer = await ask(google, query="ramen")
    assert answer.startswith("failed: places search failed: Google Places")
    assert f"HTTP {status}" in answer and PLACES_KEY not in answer


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        ({"query": "ramen", "limit": 11}, "limit", "Input should be less than or equal to 10"),
        ({"query": " "}, "query", "String should have at least 1 character"),
        ({"query": "x" * 201}, "query", "String should have at most 200 characters"),
        ({"query": "ramen", "near": "x" * 201}, "near", "String should have at most 200 characters"),
    ],
)
async def test_bad_arguments_are_sent_back_to_fix_before_google_is_asked(
    fake: FakePlaces, google: GooglePlacesSearch, args: dict[str, Any], field: str, message: str
) -> None:
    problems = retried(await ask(google, **args))
    assert list(problems) == [field] and message in problems[field]
    assert fake.requests == []


async def test_blank_near_is_left_out(fake: FakePlaces, google: GooglePlacesSearch) -> None:
    assert "ramen #1" in await ask(google, query=" ramen ", near="  ")
    [(_, body)] = fake.requests
    assert body["textQuery"] == "ramen"


def test_query_language() -> None:
    assert query_language("강남 맛집") == "ko"
    assert query_language("ramen in Gangnam") is None
    assert query_language("ㅋㅋ ramen") == "ko"  # compatibility jamo count as Hangul
