"""The production memory store: the Supermemory v3 HTTP API (Bearer auth).

Each user's memories live in a container tag of the deployment and the user: the key prefix
(``TRULOOP_KEY_PREFIX``, its ``.`` and ``:`` as ``-``) then ``_u_`` and 40 hex digits of SHA-256 over
the prefix and the user id (``ta_u_3f…``), so deployments sharing one Supermemory account never read
each other's users' memories, and any user id makes a tag Supermemory takes (at most 100 letters,
digits, ``_`` and ``-``). Supermemory matches tags exactly: a search in one tag sees nothing of another.

Memories saved before tags carried the deployment are under ``user_<user_id>``, shared by every
deployment of the account and not to be told apart. They are read (and forgotten, and erased) only
with ``legacy_tags`` (``TRULOOP_SUPERMEMORY_LEGACY_TAGS=true``, allowed with the default key prefix
alone), for an account that never served another deployment; new memories always go to the new tag.

The requests and the response fields it reads:

- save: ``POST /v3/documents`` ``{"content", "containerTags"}`` -> ``{"id", "status"}``
- search: ``POST /v3/search`` ``{"q", "containerTags", "limit"}`` ->
  ``{"results": [{"documentId", "content"?, "chunks": [{"content", "score"}], "score", "createdAt"}]}``
- list: ``POST /v3/documents/list`` ``{"containerTags", "limit", "sort": "createdAt", "order": "desc"}``
  -> ``{"memories": [{"id", "content"?, "summary"?, "createdAt"}]}``
- owner check: ``GET /v3/documents/{id}`` -> ``{"id", "containerTags", ...}`` (404: unknown)
- forget: ``DELETE /v3/documents/{id}`` -> 204 or 200 (404: unknown)

Supermemory ranks the search results itself and indexes documents asynchronously, so a memory may
take a moment to become searchable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from ...config import reveal
from .port import Memory, MemoryBackendError, utcnow

LEGACY_TAG = re.compile(r"[A-Za-z0-9_:-]{1,100}")
"""A container tag as Supermemory's API reference states it (``^[a-zA-Z0-9_:-]+$``, at most 100):
an old ``user_<user_id>`` outside it was never written, so it is not asked for."""


def container_tag(key_prefix: str, user_id: str) -> str:
    """The Supermemory container tag of one user of the deployment with ``key_prefix``."""
    readable = key_prefix.replace(".", "-").replace(":", "-")
    digest = hashlib.sha256(f"{key_prefix}\n{user_id}".encode()).hexdigest()[:40]
    return f"{readable}_u_{digest}"  # the prefix has no newline: prefix and user id cannot run together


class SupermemoryStore:
    """Memories in Supermemory, one container tag per user of the deployment (``key_prefix``)."""

    def __init__(
        self,
        api_url: str,
        api_key: str | SecretStr,
        client: httpx.AsyncClient | None = None,
        *,
        key_prefix: str,
        legacy_tags: bool = False,
        timeout_s: float = 10.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._api = api_url.rstrip("/")
        self._key = api_key
        self._prefix = key_prefix
        self._legacy = legacy_tags
        self._timeout = httpx.Timeout(timeout_s, connect=5.0)
        self._owns_client = client is None
        self._client = httpx.AsyncClient(timeout=self._timeout) if client is None else client
        self._clock = clock

    def container_tag(self, user_id: str) -> str:
        """The Supermemory container tag that holds one user's memories (new ones go there)."""
        return container_tag(self._prefix, user_id)

    def read_tags(self, user_id: str) -> list[str]:
        """Every tag one user's memories are read from: theirs, and with ``legacy_tags`` the old one."""
        tags = [self.container_tag(user_id)]
        if self._legacy and LEGACY_TAG.fullmatch(legacy := f"user_{user_id}"):
            tags.append(legacy)
        return tags

    async def save(self, user_id: str, text: str) -> Memory:
        """Add the text as a document in the user's container."""
        body = {"content": text, "containerTags": [self.container_tag(user_id)]}
        data = await self._call("POST", "/v3/documents", body)
        memory_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(memory_id, str) or not memory_id:
            raise MemoryBackendError("Supermemory did not return a document id")
        return Memory(memory_id=memory_id, text=text, created_at=self._clock().astimezone(UTC).isoformat())

    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]:
        """Supermemory's best matches in its order (of both tags, by score); an empty query lists the
        most recent."""
        if not query.strip():
            return await self.list_recent(user_id, limit)
        found: list[Memory] = []
        for tag in self.read_tags(user_id):
            data = await self._call(
                "POST", "/v3/search", {"q": query, "containerTags": [tag], "limit": limit}
            )
            results = data.get("results") if isinstance(data, dict) else None
            found += [m for r in results or [] if (m := _from_search(r)) is not None][:limit]
        if len(found) > limit:  # two tags' results: the best of both (a stable sort keeps each order)
            found.sort(key=lambda m: -(m.score or 0.0))
        return found[:limit]

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]:
        """The user's documents, newest first."""
        if limit < 1:
            return []
        found: list[Memory] = []
        for tag in self.read_tags(user_id):
            body = {"containerTags": [tag], "limit": limit, "sort": "createdAt", "order": "desc"}
            data = await self._call("POST", "/v3/documents/list", body)
            items = data.get("memories") if isinstance(data, dict) else None
            found += [m for d in items or [] if (m := _from_document(d)) is not None][:limit]
        if len(self.read_tags(user_id)) > 1:
            found.sort(key=lambda m: m.created_at, reverse=True)
        return found[:limit]

    async def forget(self, user_id: str, memory_id: str) -> bool:
        """Delete the document if it is in one of the user's containers; False otherwise."""
        path = f"/v3/documents/{quote(memory_id, safe='')}"
        document = await self._call("GET", path, missing_ok=True)
        if not isinstance(document, dict):
            return False
        tags = document.get("containerTags")
        held = {tag for tag in tags if isinstance(tag, str)} if isinstance(tags, list) else set()
        if not held & set(self.read_tags(user_id)):
            return False
        return await self._call("DELETE", path, missing_ok=True) is not None

    async def forget_all(self, user_id: str) -> int:
        """Delete the user's documents, a page at a time, until none are listed (at most 50 pages)."""
        forgotten = 0
        for _ in range(50):
            page = await self.list_recent(user_id, limit=100)
            if not page:
                break
            for memory in page:
                path = f"/v3/documents/{quote(memory.memory_id, safe='')}"
                if await self._call("DELETE", path, missing_ok=True) is not None:
                    forgotten += 1
        return forgotten

    async def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, missing_ok: bool = False
    ) -> Any:
        """One request; the JSON answer ({} when empty), None for 404 when ``missing_ok``."""
        headers = {"Authorization": f"Bearer {reveal(self._key)}", "Accept": "application/json"}
        try:
            response = await self._client.request(
                method, self._api + path, json=body, headers=headers, timeout=self._timeout
            )
        except httpx.TimeoutException:
            raise MemoryBackendError("Supermemory did not answer in time") from None
        except httpx.TransportError as exc:
            raise MemoryBackendError(f"could not reach Supermemory ({type(exc).__name__})") from None
        status = response.status_code
        if status == 404 and missing_ok:
            return None
        if status in (401, 403):
            raise MemoryBackendError(f"Supermemory refused the API key (HTTP {status})")
        if status == 429:
            raise MemoryBackendError("Supermemory is rate limiting requests (HTTP 429)")
        if status >= 400:
            detail = _error_detail(response).replace(reveal(self._key), "***")
            raise MemoryBackendError(f"Supermemory failed (HTTP {status}{': ' + detail if detail else ''})")
        if not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            raise MemoryBackendError(f"Supermemory answered with invalid JSON (HTTP {status})") from None

    async def aclose(self) -> None:
        """Close the HTTP client if this store created it."""
        if self._owns_client:
            await self._client.aclose()


def _error_detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    if isinstance(data, dict):
        for name in ("error", "message", "details"):
            value = data.get(name)
            if isinstance(value, str):
                return value[:200]
            message = value.get("message") if isinstance(value, dict) else None
            if isinstance(message, str):
                return message[:200]
    return ""


def _from_search(result: Any) -> Memory | None:
    if not isinstance(result, dict) or not isinstance(result.get("documentId"), str):
        return None
    text = result.get("content")
    if not isinstance(text, str) or not text:
        chunks = result.get("chunks") or []
        text = " ".join(
            c["content"] for c in chunks if isinstance(c, dict) and isinstance(c.get("content"), str)
        )
    score = result.get("score")
    return Memory(
        memory_id=result["documentId"],
        text=text,
        created_at=str(result.get("createdAt") or ""),
        score=float(score) if isinstance(score, int | float) else None,
    )


def _from_document(document: Any) -> Memory | None:
    if not isinstance(document, dict) or not isinstance(document.get("id"), str):
        return None
    text = document.get("content") or document.get("summary") or document.get("title") or ""
    return Memory(memory_id=document["id"], text=str(text), created_at=str(document.get("createdAt") or ""))
