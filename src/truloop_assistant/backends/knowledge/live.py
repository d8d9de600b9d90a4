"""The knowledge base every process searches: the documents in Redis, rebuilt when they change.

A search looks at the store's version at most once a second and rebuilds the in-memory index (in a
thread: it is CPU work) when a sync or an index moved it; meanwhile searches use the index they have.
While Redis holds no documents the server searches a folder's documents instead (``TRULOOP_KB_DIR``,
or the bundled samples), as it always did.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from .port import KnowledgeHit
from .search import Bm25KnowledgeBase
from .store import KnowledgeStore

log = logging.getLogger(__name__)

CHECK_EVERY_S = 1.0
"""How often a process looks whether the knowledge base changed (a version number in Redis)."""


class LiveKnowledgeBase:
    def __init__(
        self,
        store: KnowledgeStore,
        fallback: Callable[[], Bm25KnowledgeBase],
        *,
        check_every_s: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._fallback = fallback
        self._check_every_s = check_every_s
        self._clock = clock
        self._index: Bm25KnowledgeBase | None = None
        self._folder: Bm25KnowledgeBase | None = None
        self._version = -1
        self.from_redis = False
        """Whether the index searched now holds the documents in Redis (else the folder's)."""
        self._checked = float("-inf")
        self._lock = asyncio.Lock()

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        return (await self.current()).search_sync(query, limit=limit)

    async def current(self) -> Bm25KnowledgeBase:
        """The index to search now: rebuilt first if the documents changed since it was built."""
        if self._index is not None and self._clock() - self._checked < self._check_every_s:
            return self._index
        async with self._lock:
            if self._index is not None and self._clock() - self._checked < self._check_every_s:
                return self._index
            try:
                version = await self.store.version()
            except RedisError as exc:  # keep answering from what we have; look again next time
                log.warning("could not check the knowledge base's version: %s", exc)
                return self._index or self._from_folder()
            self._checked = self._clock()
            if self._index is None or version != self._version:
                self._index = await self._build(version)
                self._version = version
            return self._index

    async def _build(self, version: int) -> Bm25KnowledgeBase:
        started = time.perf_counter()
        documents = await self.store.documents() if version else []
        self.from_redis = bool(documents)
        if not documents:
            return self._from_folder()
        index = await asyncio.to_thread(Bm25KnowledgeBase, [d.document() for d in documents])
        log.info(
            "knowledge base version %d: %d documents (%d passages) in %.0f ms",
            version,
            index.document_count,
            index.passage_count,
            (time.perf_counter() - started) * 1000,
        )
        return index

    def _from_folder(self) -> Bm25KnowledgeBase:
        if self._folder is None:
            self._folder = self._fallback()
        return self._folder
