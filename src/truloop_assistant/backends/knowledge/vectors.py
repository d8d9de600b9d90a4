"""The passages' vectors in Redis, by content: a passage whose text did not change is not embedded again.

One hash (``keys.kb_vectors``): the digest of the model and the passage's text -> the vector as float32
bytes. Writers fill it before they write the documents (so a process that sees the new version finds
the vectors too) and drop what no stored passage has any more, which bounds it by the documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from redis.asyncio import Redis

from ...store import keys

if TYPE_CHECKING:
    import numpy as np

CHUNK = 512
"""Fields per HMGET / HSET / HDEL: some 3 MB of vectors at 1,536 dimensions."""


class VectorCache:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def get(self, digests: Sequence[str]) -> list[np.ndarray | None]:
        """The vector of each digest, None for those not cached."""
        import numpy as np

        found: list[np.ndarray | None] = []
        for start in range(0, len(digests), CHUNK):
            chunk = list(digests[start : start + CHUNK])
            raw = cast(list[bytes | None], await self.redis.hmget(keys.kb_vectors(), chunk))
            found.extend(None if value is None else np.frombuffer(value, dtype="<f4") for value in raw)
        return found

    async def missing(self, digests: Iterable[str]) -> set[str]:
        """The digests without a cached vector."""
        wanted = sorted(set(digests))
        return {d for d, vector in zip(wanted, await self.get(wanted), strict=True) if vector is None}

    async def put(self, vectors: dict[str, np.ndarray]) -> None:
        items = [(digest, vector.astype("<f4").tobytes()) for digest, vector in vectors.items()]
        for start in range(0, len(items), CHUNK):
            await self.redis.hset(keys.kb_vectors(), mapping=cast(Any, dict(items[start : start + CHUNK])))

    async def keep(self, digests: Iterable[str]) -> int:
        """Drop every vector but those of ``digests``; how many were dropped."""
        kept = set(digests)
        stale = [
            field
            for field in cast(list[bytes], await self.redis.hkeys(keys.kb_vectors()))
            if field.decode() not in kept
        ]
        for start in range(0, len(stale), CHUNK):
            await self.redis.hdel(keys.kb_vectors(), *stale[start : start + CHUNK])
        return len(stale)
