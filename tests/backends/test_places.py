"""Google Places (New) Text Search adapter, against a local fake."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.fakes.places import PLACES_KEY, FakePlaces
from tests.support import served
from truloop_assistant.backends.places import GooglePlacesSearch, LatLng, PlacesError
from truloop_assistant.local.embedded_redis import free_port

MASK = (
    "places.displayName,places.formattedAddress,places.rating,places.userRatingCount,places.location,"
    "places.googleMapsUri,places.currentOpeningHours.openNow,places.types"
)


@pytest.fixture
async def fake() -> AsyncIterator[FakePlaces]:
    async with served(FakePlaces()) as places:
        yield places


@pytest.fixture
async def search(fake: FakePlaces) -> AsyncIterator[GooglePlacesSearch]:
    client = GooglePlacesSearch(fake.url, PLACES_KEY)
    yield client
    await client.aclose()


async def test_request_shape(fake: FakePlaces, search: GooglePlacesSearch) -> None:
    await search.search("라멘", near="강남역", limit=3, language="ko")
    [(headers, body)] = fake.requests
    assert headers["x-goog-api-key"] == PLACES_KEY
    assert headers["x-goog-fieldmask"] == MASK
    assert body == {"textQuery": "라멘 near 강남역", "pageSize": 3, "languageCode": "ko"}

    await search.search("ramen")
    assert fake.requests[1][1] == {"textQuery": "ramen", "pageSize": 5}


async def test_parses_places(search: GooglePlacesSearch) -> None:
    places = await search.search("quiet cafe", limit=2)
    assert [p.name for p in places] == ["quiet cafe #1", "quiet cafe #2"]
    first = places[0]
    assert first.address == "1 Test-ro, Gangnam-gu, Seoul"
    assert first.rating == 4.1 and first.user_rating_count == 100
    assert first.location == LatLng(lat=37.491, lng=127.02)
    assert first.maps_url == "https://maps.google.com/?cid=1"
    assert first.open_now is True and places[1].open_now is False
    assert first.types == ["cafe", "food", "point_of_interest"]


async def test_nothing_found_is_an_empty_list(search: GooglePlacesSearch) -> None:
    assert await search.search("nothing here") == []


async def test_sparse_places_parse_with_nones() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"places": [{"displayName": {"text": "Bare"}}, {"rating": 5}]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        [place] = await GooglePlacesSearch("http://places.test", PLACES_KEY, client).search("bare")
    assert place.name == "Bare" and place.address == ""
    assert place.rating is None and place.location is None and place.open_now is None and place.types == []


@pytest.mark.parametrize(("status", "words"), [(500, "unavailable"), (403, "PERMISSION_DENIED")])
async def test_errors_become_places_errors(
    fake: FakePlaces, search: GooglePlacesSearch, status: int, words: str
) -> None:
    fake.fail_with = status
    with pytest.raises(PlacesError, match=f"HTTP {status}") as failed:
        await search.search("ramen")
    assert words in str(failed.value)
    assert PLACES_KEY not in str(failed.value)


async def test_wrong_key_is_refused_without_leaking_it(fake: FakePlaces) -> None:
    wrong = GooglePlacesSearch(fake.url, "AIza-wrong-secret")
    with pytest.raises(PlacesError, match="401") as failed:
        await wrong.search("ramen")
    assert "AIza-wrong-secret" not in str(failed.value)
    await wrong.aclose()


async def test_timeout_and_unreachable() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(hang)) as client:
        with pytest.raises(PlacesError, match="in time"):
            await GooglePlacesSearch("http://places.test", PLACES_KEY, client).search("ramen")

    unreachable = GooglePlacesSearch(f"http://127.0.0.1:{free_port()}", PLACES_KEY)
    with pytest.raises(PlacesError, match="could not reach") as failed:
        await unreachable.search("ramen")
    assert PLACES_KEY not in str(failed.value)
    await unreachable.aclose()
