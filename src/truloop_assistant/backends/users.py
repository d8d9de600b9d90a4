"""The user directory: who is in the app, how to reach them, and their external (employee) ids.

``RedisUserDirectory`` is the default: profiles live in one Redis hash (user id -> JSON), imported
from a JSON file with ``truloop-assistant users import FILE`` (see ``data/sample_users.json``).

``HttpUserDirectory`` is the production adapter for the app's own user API. Every request carries
``Authorization: Bearer <token>``; the shape it expects:

- ``GET {base}/users/{user_id}`` -> a profile object, or ``404`` when there is no such user
- ``GET {base}/users?query=...&by=...&limit=...`` -> ``{"users": [profile, ...]}``
  (``by`` is one of ``contact``, ``username``, ``group``, ``name``, or absent for any field)
- ``POST {base}/users/eids`` with ``{"user_ids": [...]}`` -> ``{"eids": {"<user_id>": "<eid>" | null}}``
  (users the API does not know are left out of ``eids``; ``null`` is a known user without an eid)

A profile object has the fields of :class:`UserProfile`: ``user_id``, ``name``, ``username``,
``eid``, ``email``, ``phone``, ``groups``, ``title``, ``timezone``. Any other status, a network
failure or a body of another shape raises :class:`UserDirectoryError`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import quote

import httpx
from pydantic import BaseModel, Field, ValidationError
from redis.asyncio import Redis

from ..store import keys

SearchField = Literal["contact", "username", "group", "name"]

SAMPLE_USERS_FILE = Path(__file__).resolve().parent.parent / "data" / "sample_users.json"


class UserProfile(BaseModel):
    user_id: str = Field(min_length=1)
    name: str
    username: str
    eid: str | None = Field(default=None, description="External (employee) id")
    email: str | None = Field(default=None, description="Contact e-mail address")
    phone: str | None = Field(default=None, description="Contact phone number")
    groups: list[str] = Field(default_factory=list)
    title: str | None = None
    timezone: str | None = Field(default=None, description="IANA time zone, e.g. 'Asia/Seoul'")


class UserDirectoryError(Exception):
    """The user directory failed or answered something unexpected; the message says what."""


class UsersFileError(ValueError):
    """A users file is missing or invalid; the message names the file and the bad entry."""


class UserDirectory(Protocol):
    async def get_profile(self, user_id: str) -> UserProfile | None: ...

    async def search(
        self, query: str, *, by: SearchField | None = None, limit: int = 10
    ) -> list[UserProfile]: ...

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        """Known users' eids (None: known, no eid); unknown ids are left out."""
        ...

    async def is_member(self, user_id: str) -> bool: ...

    async def has_users(self) -> bool:
        """False for a directory nobody was loaded into: then there are no guests, only members."""
        ...


async def unknown_user_ids(directory: UserDirectory, user_ids: list[str]) -> list[str]:
    """The ids among ``user_ids`` that the directory does not know, in the given order."""
    if not user_ids:
        return []
    known = await directory.get_eids(user_ids)
    return [user_id for user_id in user_ids if user_id not in known]


# -- matching (the default directory's search)


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def _phone_digits(text: str) -> str:
    digits = re.sub(r"\D", "", text)
    return "0" + digits[2:] if digits.startswith("82") else digits  # +82 10-... == 010-...


def _contact_match(query: str, user: UserProfile) -> int:
    folded = _fold(query)
    if user.email and folded and folded in user.email.casefold():
        return 2 if folded == user.email.casefold() else 1
    digits = _phone_digits(query)
    if user.phone and len(digits) >= 4 and digits in _phone_digits(user.phone):
        return 2 if digits == _phone_digits(user.phone) else 1
    return 0


def _partial(query: str, value: str) -> int:
    folded, target = _fold(query), _fold(value)
    if not folded or folded not in target:
        return 0
    return 2 if folded == target else 1


def _score(query: str, by: SearchField | None, user: UserProfile) -> int:
    """2 for an exact match, 1 for a partial one, 0 for none."""
    scores = []
    if by in (None, "contact"):
        scores.append(_contact_match(query, user))
    if by in (None, "username"):
        scores.append(_partial(query.lstrip("@"), user.username))
    if by in (None, "name"):
        scores.append(_partial(query, user.name))
    if by in (None, "group"):
        scores.append(2 if any(_fold(g) == _fold(query) for g in user.groups) else 0)
    return max(scores)


def match_users(
    users: list[UserProfile], query: str, *, by: SearchField | None, limit: int
) -> list[UserProfile]:
    """Users matching ``query``, exact matches first, then by name."""
    scored = [(score, user) for user in users if (score := _score(query, by, user))]
    scored.sort(key=lambda pair: (-pair[0], pair[1].name.casefold(), pair[1].user_id))
    return [user for _, user in scored[:limit]]


# -- the default: Redis


def load_users_file(path: str | Path) -> list[UserProfile]:
    """Read a JSON list of user objects, naming the file and the entry on any problem."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsersFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsersFileError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UsersFileError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, list):
        raise UsersFileError(f"{path}: expected a JSON list of user objects, got {type(raw).__name__}")
    users: list[UserProfile] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        label = f"entry {index}"
        if isinstance(entry, dict) and isinstance(entry.get("user_id"), str):
            label += f" (user_id {entry['user_id']!r})"
        try:
            user = UserProfile.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors()
            )
            raise UsersFileError(f"{path}: {label}: {problems}") from None
        if user.user_id in seen:
            raise UsersFileError(f"{path}: {label}: user_id {user.user_id!r} appears twice")
        seen.add(user.user_id)
        users.append(user)
    return users


class RedisUserDirectory:
    """Profiles in one Redis hash; search scans them (fine for directories of thousands)."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._key = keys.user_profiles()

    async def import_users(self, users: list[UserProfile]) -> int:
        """Insert or replace these profiles; return how many were written."""
        if not users:
            return 0
        ids = [user.user_id for user in users]
        existing = await self._redis.hmget(self._key, ids)
        new = len({i for i, raw in zip(ids, existing, strict=True) if raw is None})
        size = int(await self._redis.hlen(self._key))
        if size + new > keys.USERS_MAX:
            raise UserDirectoryError(
                f"the directory would hold {size + new} users, more than the limit of {keys.USERS_MAX}"
            )
        await self._redis.hset(self._key, mapping={u.user_id: u.model_dump_json() for u in users})
        return len({u.user_id for u in users})

    async def get_profile(self, user_id: str) -> UserProfile | None:
        raw = await self._redis.hget(self._key, user_id)
        return None if raw is None else UserProfile.model_validate_json(raw)

    async def search(
        self, query: str, *, by: SearchField | None = None, limit: int = 10
    ) -> list[UserProfile]:
        raws = (await self._redis.hgetall(self._key)).values()
        users = [UserProfile.model_validate_json(raw) for raw in raws]
        return match_users(users, query, by=by, limit=limit)

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        if not user_ids:
            return {}
        raws = await self._redis.hmget(self._key, user_ids)
        return {
            user_id: UserProfile.model_validate_json(raw).eid
            for user_id, raw in zip(user_ids, raws, strict=True)
            if raw is not None
        }

    async def is_member(self, user_id: str) -> bool:
        return bool(await self._redis.hexists(self._key, user_id))

    async def has_users(self) -> bool:
        return bool(await self._redis.hlen(self._key))


# -- production: the app's user API


class HttpUserDirectory:
    """The app's user API over HTTP (see the module docstring for the expected shape)."""

    def __init__(
        self, base_url: str, token: str, client: httpx.AsyncClient | None = None, *, timeout: float = 10.0
    ) -> None:
        self._base = base_url.rstrip("/")
        self._headers = {"authorization": f"Bearer {token}", "accept": "application/json"}
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout))

    async def aclose(self) -> None:
        """Close the HTTP client if this directory created it."""
        if self._own_client:
            await self._client.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self._client.request(method, self._base + path, headers=self._headers, **kwargs)
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
        params: dict[str, str | int] = {"query": query, "limit": limit}
        if by is not None:
            params["by"] = by
        body = self._json(await self._request("GET", "/users", params=params), "/users")
        try:
            return [UserProfile.model_validate(u) for u in body["users"]][:limit]
        except (TypeError, KeyError, ValidationError):
            raise UserDirectoryError("the user API answered /users without a valid 'users' list") from None

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        if not user_ids:
            return {}
        response = await self._request("POST", "/users/eids", json={"user_ids": user_ids})
        body = self._json(response, "/users/eids")
        eids = body.get("eids") if isinstance(body, dict) else None
        if not isinstance(eids, dict) or not all(v is None or isinstance(v, str) for v in eids.values()):
            raise UserDirectoryError("the user API answered /users/eids without a valid 'eids' object")
        return {str(k): v for k, v in eids.items()}

    async def is_member(self, user_id: str) -> bool:
        return await self.get_profile(user_id) is not None

    async def has_users(self) -> bool:
        return True
