"""Long-term memories of each user: facts and preferences the user asked the assistant to remember.

``RedisMemoryStore`` is the default: a bounded hash per user and a tiny in-process BM25 over word
tokens and Hangul character bigrams, good enough for Korean and English without any model.

``SupermemoryStore`` is the production adapter for the Supermemory v3 HTTP API (Bearer auth). Each
user's memories live in the container tag ``user_<user_id>``. The requests and the response fields
it reads:

- save: ``POST /v3/documents`` ``{"content", "containerTags"}`` -> ``{"id", "status"}``
- search: ``POST /v3/search`` ``{"q", "containerTags", "limit"}`` ->
  ``{"results": [{"documentId", "content"?, "chunks": [{"content", "score"}], "score", "createdAt"}]}``
- list: ``POST /v3/documents/list`` ``{"containerTags", "limit", "sort": "createdAt", "order": "desc"}``
  -> ``{"memories": [{"id", "content"?, "summary"?, "createdAt"}]}``
- owner check: ``GET /v3/documents/{id}`` -> ``{"id", "containerTags", ...}`` (404: unknown)
- forget: ``DELETE /v3/documents/{id}`` -> 204 or 200 (404: unknown)

Supermemory indexes documents asynchronously, so a memory may take a moment to become searchable.
"""

from __future__ import annotations

import math
import re
import secrets
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol, cast
from urllib.parse import quote

import httpx
from pydantic import BaseModel
from redis.asyncio import Redis

from ..store import keys


class Memory(BaseModel):
    memory_id: str
    text: str
    created_at: str
    """ISO 8601, UTC."""
    score: float | None = None
    """Relevance to the search query (higher is better); None when not from a search."""


class MemoryBackendError(Exception):
    """The memory service failed or refused the request; the message says why, without secrets."""


class MemoryStore(Protocol):
    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]: ...

    async def save(self, user_id: str, text: str) -> Memory: ...

    async def forget(self, user_id: str, memory_id: str) -> bool: ...

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]: ...


def _utcnow() -> datetime:
    return datetime.now(UTC)


def new_memory_id() -> str:
    """``mem_`` and 12 hex digits."""
    return "mem_" + secrets.token_hex(6)


# -- ranking

_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3\u3040-\u30ff\u4e00-\u9fff]")
_K1 = 1.2
_B = 0.75


def terms(text: str) -> list[str]:
    """Index terms: lower-cased words (a plural 's' dropped) and, for Hangul/CJK words, their bigrams."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            out.append(word)
            if len(word) > 2:
                out.extend(word[i : i + 2] for i in range(len(word) - 1))
        elif len(word) > 1:
            if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
                word = word[:-1]
            out.append(word)
    return out


def rank(query: str, memories: list[Memory], limit: int) -> list[Memory]:
    """The memories matching the query best (BM25), newest first among equals; non-matching left out."""
    wanted = set(terms(query))
    docs = [Counter(terms(m.text)) for m in memories]
    if not wanted or not docs:
        return []
    avg_len = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = Counter(t for d in docs for t in wanted & d.keys())
    n = len(docs)
    scored: list[tuple[float, str, Memory]] = []
    for memory, doc in zip(memories, docs, strict=True):
        length = sum(doc.values())
        score = 0.0
        for term in wanted & doc.keys():
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            tf = doc[term]
            score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / avg_len))
        if score > 0:
            scored.append((score, memory.created_at, memory))
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [m.model_copy(update={"score": round(s, 4)}) for s, _, m in scored[:limit]]


# -- Redis

# KEYS: memories hash, order zset. ARGV: id, json, score (µs), max per user, ttl s
_SAVE = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREM', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[1], unpack(old))
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
"""


class RedisMemoryStore:
    """Memories in Redis: one hash per user, at most ``max_per_user``, kept ``ttl_s`` after the last save."""

    def __init__(
        self,
        redis: Redis,
        *,
        max_per_user: int = keys.MEMORY_MAX,
        ttl_s: int = keys.MEMORY_TTL_S,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._redis = redis
        self._max = max_per_user
        self._ttl_s = ttl_s
        self._clock = clock
        self._save_script = redis.register_script(_SAVE)

    async def save(self, user_id: str, text: str) -> Memory:
        now = self._clock().astimezone(UTC)
        memory = Memory(memory_id=new_memory_id(), text=text, created_at=now.isoformat())
        micros = int(now.timestamp() * 1_000_000)
        await self._save_script(
            keys=[keys.memories(user_id), keys.memory_order(user_id)],
            args=[
                memory.memory_id,
                memory.model_dump_json(exclude={"score"}),
                micros,
                self._max,
                self._ttl_s,
            ],
        )
        return memory

    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]:
        if not query.strip():
            return await self.list_recent(user_id, limit)
        raw = await self._redis.hgetall(keys.memories(user_id))
        return rank(query, [_parse(v) for v in raw.values()], limit)

    async def forget(self, user_id: str, memory_id: str) -> bool:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.memories(user_id), memory_id)
            pipe.zrem(keys.memory_order(user_id), memory_id)
            removed, _ = await pipe.execute()
        return bool(removed)

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]:
        if limit < 1:
            return []
        ids = cast(list[bytes], await self._redis.zrevrange(keys.memory_order(user_id), 0, limit - 1))
        if not ids:
            return []
        values = await self._redis.hmget(keys.memories(user_id), ids)
        return [_parse(v) for v in values if v is not None]


def _parse(raw: bytes | str) -> Memory:
    return Memory.model_validate_json(raw)


# -- Supermemory


class SupermemoryStore:
    """Memories in Supermemory, one container tag per user."""

    def __init__(
        self,
        api_url: str,
        api_key: str,
        client: httpx.AsyncClient | None = None,
        *,
        timeout_s: float = 10.0,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._api = api_url.rstrip("/")
        self._key = api_key
        self._timeout = httpx.Timeout(timeout_s, connect=5.0)
        self._owns_client = client is None
        self._client = httpx.AsyncClient(timeout=self._timeout) if client is None else client
        self._clock = clock

    @staticmethod
    def container_tag(user_id: str) -> str:
        return f"user_{user_id}"

    async def save(self, user_id: str, text: str) -> Memory:
        body = {"content": text, "containerTags": [self.container_tag(user_id)]}
        data = await self._call("POST", "/v3/documents", body)
        memory_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(memory_id, str) or not memory_id:
            raise MemoryBackendError("Supermemory did not return a document id")
        return Memory(memory_id=memory_id, text=text, created_at=self._clock().astimezone(UTC).isoformat())

    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]:
        if not query.strip():
            return await self.list_recent(user_id, limit)
        body = {"q": query, "containerTags": [self.container_tag(user_id)], "limit": limit}
        data = await self._call("POST", "/v3/search", body)
        results = data.get("results") if isinstance(data, dict) else None
        memories = [m for r in results or [] if (m := _from_search(r)) is not None]
        return memories[:limit]

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]:
        if limit < 1:
            return []
        body = {
            "containerTags": [self.container_tag(user_id)],
            "limit": limit,
            "sort": "createdAt",
            "order": "desc",
        }
        data = await self._call("POST", "/v3/documents/list", body)
        items = data.get("memories") if isinstance(data, dict) else None
        return [m for d in items or [] if (m := _from_document(d)) is not None][:limit]

    async def forget(self, user_id: str, memory_id: str) -> bool:
        path = f"/v3/documents/{quote(memory_id, safe='')}"
        document = await self._call("GET", path, missing_ok=True)
        if not isinstance(document, dict):
            return False
        tags = document.get("containerTags") or []
        if self.container_tag(user_id) not in tags:
            return False
        return await self._call("DELETE", path, missing_ok=True) is not None

    async def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, missing_ok: bool = False
    ) -> Any:
        """One request; the JSON answer ({} when empty), None for 404 when ``missing_ok``."""
        headers = {"Authorization": f"Bearer {self._key}", "Accept": "application/json"}
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
            detail = _error_detail(response).replace(self._key, "***")
            raise MemoryBackendError(f"Supermemory failed (HTTP {status}{': ' + detail if detail else ''})")
        if not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            raise MemoryBackendError(f"Supermemory answered with invalid JSON (HTTP {status})") from None

    async def aclose(self) -> None:
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
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return value["message"][:200]
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
