"""The production user directory: the app's own user API over HTTP.

Every request carries ``Authorization: Bearer <token>``; the shape it expects:

- ``GET {base}/users/{user_id}`` -> a profile object, or ``404`` when there is no such user
- ``GET {base}/users?query=...&by=...&limit=...`` -> ``{"users": [profile, ...]}``
  (``by`` is one of ``contact``, ``username``, ``group``, ``name``, or absent for any field)
- ``GET {base}/users?phone=+821055501234&region=KR`` -> ``{"users": [profile, ...]}``: the users
  whose phone is that number (E.164; a number stored without a country code read in ``region``)
- ``POST {base}/users/eids`` with ``{"user_ids": [...]}`` -> ``{"eids": {"<user_id>": "<eid>" | null}}``
  (users the API does not know are left out of ``eids``; ``null`` is a known user without an eid)

A profile object has the fields of :class:`~.port.UserProfile`: ``user_id``, ``name``, ``username``,
``eid``, ``email``, ``phone``, ``groups``, ``title``, ``timezone``, and optionally ``role``
(``"member"``, the default, or ``"admin"``: sees everyone's e-mail and phone and gets the admin rate
limit) and ``shared`` (``["email", "phone"]`` or part of it: shown to every member; default none).
Any other status, a network failure or a body of another shape raises
:class:`~.port.UserDirectoryError` (except in :meth:`HttpUserDirectory.is_admin`, which says False).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr, ValidationError

from ...config import reveal
from .matching import phone_owners_among
from .port import SearchField, UserDirectoryError, UserProfile

log = logging.getLogger(__name__)


class HttpUserDirectory:
    """The app's user API over HTTP (see the module docstring for the expected shape)."""

    def __init__(
        self,
        base_url: str,
        token: str | SecretStr,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = 10.0,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._token = token
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout))

    async def aclose(self) -> None:
        """Close the HTTP client if this directory created it."""
        if self._own_client:
            await self._client.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            headers = {"authorization": f"Bearer {reveal(self._token)}", "accept": "application/json"}
            return await self._client.request(method, self._base + path, headers=headers, **kwargs)
        except httpx.TimeoutException:
            raise UserDirectoryError(f"the user API did not answer {method} {path} in time") from None
        except httpx.HTTPError as exc:
            raise UserDirectoryError(
                f"the user API is unreachable ({type(exc).__name__} on {method} {path})"
            ) from None

    @staticmethod
    def _json(response: httpx.Response, what: str) -> Any:
        if response.status_code != 200:
            raise UserDirectoryError(
                f"the user API answered {response.status_code} to {response.request.method} {what}"
            )
        try:
            return response.json()
        except ValueError:
            raise UserDirectoryError(f"the user API answered {what} with a body that is not JSON") from None

    async def get_profile(self, user_id: str) -> UserProfile | None:
        """``GET /users/{user_id}``; None for 404."""
        path = f"/users/{quote(user_id, safe='')}"
        response = await self._request("GET", path)
        if response.status_code == 404:
            return None
        body = self._json(response, path)
        try:
            return UserProfile.model_validate(body)
        except ValidationError:
            raise UserDirectoryError(f"the user API answered {path} with an invalid profile") from None

    async def search(
        self, query: str, *, by: SearchField | None = None, limit: int = 10
    ) -> list[UserProfile]:
        """``GET /users?query=&by=&limit=``, in the API's order."""
        params: dict[str, str | int] = {"query": query, "limit": limit}
        if by is not None:
            params["by"] = by
        body = self._json(await self._request("GET", "/users", params=params), "/users")
        try:
            return [UserProfile.model_validate(u) for u in body["users"]][:limit]
        except (TypeError, KeyError, ValidationError):
            raise UserDirectoryError("the user API answered /users without a valid 'users' list") from None

    async def phone_owners(self, numbers: list[str], *, region: str) -> dict[str, list[str]]:
        """``GET /users?phone=&region=`` for each number; of what the API answers, only the users whose
        phone really is the number count (an API that matched loosely invites nobody by mistake)."""

        async def owners(number: str) -> list[UserProfile]:
            params = {"phone": number, "region": region}
            body = self._json(await self._request("GET", "/users", params=params), "/users?phone")
            try:
                return [UserProfile.model_validate(u) for u in body["users"]]
            except (TypeError, KeyError, ValidationError):
                raise UserDirectoryError(
                    "the user API answered /users?phone without a valid 'users' list"
                ) from None

        found = await asyncio.gather(*(owners(n) for n in dict.fromkeys(numbers)))
        return phone_owners_among([u for users in found for u in users], numbers, region=region)

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        """``POST /users/eids``; unknown ids are left out."""
        if not user_ids:
            return {}
        response = await self._request("POST", "/users/eids", json={"user_ids": user_ids})
        body = self._json(response, "/users/eids")
        eids = body.get("eids") if isinstance(body, dict) else None
        if not isinstance(eids, dict) or not all(v is None or isinstance(v, str) for v in eids.values()):
            raise UserDirectoryError("the user API answered /users/eids without a valid 'eids' object")
        return {str(k): v for k, v in eids.items()}

    async def is_member(self, user_id: str) -> bool:
        """Whether the API has a profile for the user."""
        return await self.get_profile(user_id) is not None

    async def is_admin(self, user_id: str) -> bool:
        """Whether the API's profile has ``role: "admin"``; False when the API cannot say."""
        try:
            profile = await self.get_profile(user_id)
        except UserDirectoryError as exc:
            log.warning("could not tell whether %s is an admin, so they are not: %s", user_id, exc)
            return False
        return profile is not None and profile.role == "admin"

    async def has_users(self) -> bool:
        """Always True: the app's own API is never an empty directory."""
        return True
