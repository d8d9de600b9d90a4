"""Looking up places (restaurants, cafés, shops ...) by text.

``GooglePlacesSearch`` uses the Google Places API (New) Text Search: ``POST /v1/places:searchText``
with the ``X-Goog-Api-Key`` header and a field mask. There is no keyless default: without a key
the server has no places backend and the tool says so.
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx
from pydantic import BaseModel, Field, SecretStr

from ..config import reveal
from ..errors import ServiceError

FIELD_MASK = ",".join(
    [
        "places.displayName",
        "places.formattedAddress",
        "places.rating",
        "places.userRatingCount",
        "places.location",
        "places.googleMapsUri",
        "places.currentOpeningHours.openNow",
        "places.types",
    ]
)


class LatLng(BaseModel):
    lat: float
    lng: float


class Place(BaseModel):
    name: str
    address: str
    rating: float | None = Field(default=None, description="Average rating, 1 to 5")
    user_rating_count: int | None = Field(default=None, description="How many ratings the average is of")
    location: LatLng | None = None
    maps_url: str | None = Field(default=None, description="Link to the place on Google Maps")
    open_now: bool | None = Field(default=None, description="Open right now; None when unknown")
    types: list[str] = Field(default_factory=list)


class PlacesError(ServiceError):
    """The places provider failed or refused the request; the message says why, without secrets."""


class PlacesSearch(Protocol):
    async def search(
        self, query: str, *, near: str | None = None, limit: int = 5, language: str | None = None
    ) -> list[Place]: ...


class GooglePlacesSearch:
    """Google Places API (New) Text Search over async httpx."""

    def __init__(
        self,
        api_url: str,
        api_key: str | SecretStr,
        client: httpx.AsyncClient | None = None,
        *,
        timeout_s: float = 10.0,
    ) -> None:
        self._url = api_url.rstrip("/") + "/v1/places:searchText"
        self._key = api_key
        self._timeout = httpx.Timeout(timeout_s, connect=5.0)
        self._owns_client = client is None
        self._client = httpx.AsyncClient(timeout=self._timeout) if client is None else client

    async def search(
        self, query: str, *, near: str | None = None, limit: int = 5, language: str | None = None
    ) -> list[Place]:
        body: dict[str, Any] = {"textQuery": f"{query} near {near}" if near else query, "pageSize": limit}
        if language:
            body["languageCode"] = language
        headers = {"X-Goog-Api-Key": reveal(self._key), "X-Goog-FieldMask": FIELD_MASK}
        try:
            response = await self._client.post(self._url, json=body, headers=headers, timeout=self._timeout)
        except httpx.TimeoutException:
            raise PlacesError("Google Places did not answer in time") from None
        except httpx.TransportError as exc:
            raise PlacesError(f"could not reach Google Places ({type(exc).__name__})") from None
        if response.status_code >= 400:
            raise PlacesError(self._describe_error(response))
        try:
            data = response.json()
        except ValueError:
            raise PlacesError("Google Places answered with invalid JSON") from None
        places = data.get("places") if isinstance(data, dict) else None
        return [p for raw in places or [] if (p := _parse_place(raw)) is not None][:limit]

    def _describe_error(self, response: httpx.Response) -> str:
        status = response.status_code
        reason, message = "", ""
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict):
            reason = str(error.get("status") or "")
            message = str(error.get("message") or "")[:200]
        head = "Google Places refused the request" if status < 500 else "Google Places is unavailable"
        detail = " ".join(part for part in (f"HTTP {status}", reason) if part)
        text = f"{head} ({detail}{': ' + message if message else ''})"
        key = reveal(self._key)
        return text.replace(key, "***") if key else text

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _parse_place(raw: Any) -> Place | None:
    if not isinstance(raw, dict):
        return None
    display = raw.get("displayName")
    name = display.get("text") if isinstance(display, dict) else None
    if not isinstance(name, str) or not name:
        return None
    loc = raw.get("location")
    location = None
    if isinstance(loc, dict) and isinstance(loc.get("latitude"), int | float):
        location = LatLng(lat=loc["latitude"], lng=loc.get("longitude", 0.0))
    hours = raw.get("currentOpeningHours")
    open_now = hours.get("openNow") if isinstance(hours, dict) else None
    rating = raw.get("rating")
    count = raw.get("userRatingCount")
    types = raw.get("types")
    return Place(
        name=name,
        address=str(raw.get("formattedAddress") or ""),
        rating=float(rating) if isinstance(rating, int | float) else None,
        user_rating_count=count if isinstance(count, int) else None,
        location=location,
        maps_url=raw.get("googleMapsUri") if isinstance(raw.get("googleMapsUri"), str) else None,
        open_now=open_now if isinstance(open_now, bool) else None,
        types=[t for t in types if isinstance(t, str)] if isinstance(types, list) else [],
    )
