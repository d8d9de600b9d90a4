"""A local stand-in for the Google Places API (New) Text Search, with canned answers.

Checks ``X-Goog-Api-Key`` (401 when missing or wrong, with Google's error body). Each query gets
places whose names contain the query text; a query containing "nothing" finds none (``{}``).
``fail_with`` makes the next answers 500 or 403 with an error body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PLACES_KEY = "AIza-test-places-key"

_ERRORS = {
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "Places API (New) has not been used in project 1 or it is disabled."),
    500: ("INTERNAL", "Internal error encountered."),
}


def _error(status: int) -> JSONResponse:
    reason, message = _ERRORS.get(status, ("UNKNOWN", "error"))
    return JSONResponse({"error": {"code": status, "message": message, "status": reason}}, status_code=status)


@dataclass
class FakePlaces:
    api_key: str = PLACES_KEY
    requests: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    """(headers, body) of every search."""
    fail_with: int | None = None
    """When set (500 or 403), every search answers with that status and an error body."""
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/places:searchText", self._search, methods=["POST"])])

    async def _search(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append((dict(request.headers), body))
        if request.headers.get("x-goog-api-key") != self.api_key:
            return _error(401)
        if self.fail_with is not None:
            return _error(self.fail_with)
        query = str(body.get("textQuery") or "")
        if "nothing" in query:
            return JSONResponse({})
        count = min(int(body.get("pageSize") or 20), 3)
        return JSONResponse({"places": [self._place(query, i) for i in range(1, count + 1)]})

    @staticmethod
    def _place(query: str, i: int) -> dict[str, Any]:
        return {
            "displayName": {"text": f"{query} #{i}", "languageCode": "ko"},
            "formattedAddress": f"{i} Test-ro, Gangnam-gu, Seoul",
            "rating": 4.0 + i / 10,
            "userRatingCount": 100 * i,
            "location": {"latitude": 37.49 + i / 1000, "longitude": 127.02},
            "googleMapsUri": f"https://maps.google.com/?cid={i}",
            "currentOpeningHours": {"openNow": i % 2 == 1},
            "types": ["cafe", "food", "point_of_interest"],
        }
