"""The knowledge base every process searches: the documents in Redis, rebuilt when they change.

A search looks at the store's version at most once a second and rebuilds the in-memory index (in a
thread: it is CPU work) when a sync or an index moved it; meanwhile searches use the index they have.
While Redis holds no documents the server searches a folder's documents instead (``TRULOOP_KB_DIR``,
or the bundled samples), as it always did.

With an embedding model the index holds the passages' vectors too (read from Redis with the
documents; a folder's are embedded on first use and cached the same way), and a search embeds the
question to rank by meaning as well. When the model does not answer, that search goes on by words.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from .embedding import EmbeddingError
from .port import KnowledgeHit
from .search import Bm25KnowledgeBase
from .store import KnowledgeStore

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CHECK_EVERY_S = 1.0
"""How often a process looks whether the knowledge base changed (a version number in Redis)."""
QUERY_TIMEOUT_S = 5.0
"""How long a search waits for the question's vector before it goes on by words alone."""


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
        self._checked = float("-inf")
        self._lock = asyncio.Lock()
        self.from_redis = False
        """Whether the index searched now holds the documents in Redis (else the folder's)."""

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        index = await self.current()
        vector = await self.query_vector(query) if index.has_vectors else None
        return index.search_sync(query, limit=limit, query_vector=vector)

    async def query_vector(self, query: str) -> np.ndarray | None:
        """The question's vector; None without an embedding model, or when it did not answer in time."""
        embedder = self.store.embedder
        if embedder is None:
            return None
        try:
            async with asyncio.timeout(QUERY_TIMEOUT_S):
                return await embedder.query(query)
        except (EmbeddingError, TimeoutError) as exc:
            log.warning(
                "knowledge search by words only, the embedding model did not answer: %s",
                exc or f"no answer within {QUERY_TIMEOUT_S:g} s",
            )
            return None

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
                return self._index or await self._from_folder()
            self._checked = self._clock()
            if self._index is None or version != self._version:
                self._index = await self._build(version)
                self._version = version
            return self._index

    async def _build(self, version: int) -> Bm25KnowledgeBase:
        started = time.perf_counter()
        # By id: equal scores rank in the same order in every process, whatever order Redis keeps.
        documents = sorted(await self.store.documents(), key=lambda d: d.doc_id) if version else []
        self.from_redis = bool(documents)
        if not documents:
            return await self._from_folder()
        # In the thread too: tokens of another tokenizer version are recomputed, which is CPU work.
        searchable = await asyncio.to_thread(lambda: [d.document() for d in documents])
        if self.store.embedder is not None and (left := await self.store.attach_vectors(searchable)):
            log.warning(
                "%d passages have no vector of %s yet: they are found by words only until a kb index or "
                "sync embeds them",
                left,
                self.store.embedder.model_name,
            )
        index = await asyncio.to_thread(Bm25KnowledgeBase, searchable)
        log.info(
            "knowledge base version %d: %d documents (%d passages) in %.0f ms",
            version,
            index.document_count,
            index.passage_count,
            (time.perf_counter() - started) * 1000,
        )
        return index

    async def _from_folder(self) -> Bm25KnowledgeBase:
        if self._folder is None:
            folder = await asyncio.to_thread(self._fallback)
            self._folder = await self._with_vectors(folder) if self.store.embedder is not None else folder
        return self._folder

    async def _with_vectors(self, folder: Bm25KnowledgeBase) -> Bm25KnowledgeBase:
        """The folder's index with its passages' vectors, embedding (and caching) those not cached yet."""
        documents = folder.documents
        try:
            embedded, spend = await self.store.embed_missing(documents)
            await self.store.attach_vectors(documents)
        except (EmbeddingError, RedisError) as exc:
            log.warning("the folder's documents are searched by words only: %s", exc)
            return folder
        if embedded:
            log.info("embedded %d passages of the folder's documents, costing %s", embedded, spend)
        return await asyncio.to_thread(Bm25KnowledgeBase, documents, folder.sources)
