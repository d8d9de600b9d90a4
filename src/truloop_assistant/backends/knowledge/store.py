"""The knowledge base's documents in Redis, where every API and worker process finds the newest.

Writers (``kb index DIR``, ``kb sync-notion``) put documents by source: each document is one hash
field (its title, where it lives, when it was last edited, and its passages with their tokens),
compressed. Every write bumps a version number; a process searching the knowledge base compares it
now and then and rebuilds its in-memory index when it moved (:class:`.live.LiveKnowledgeBase`), so a
sync is searchable within about a second, without a restart.

Bounded: at most ``keys.KB_PASSAGES_MAX`` passages in all (a write that would go beyond is refused,
naming the limit), each a few hundred characters; the whole base is a few tens of MB at most.

With an embedding model (``TRULOOP_EMBEDDING_MODEL``) a write also embeds every stored passage that
has no vector yet, in batches, before the documents are written, and drops the vectors no passage has
any more (:mod:`.vectors`); an unchanged passage is never embedded twice. What it cost is in the
:class:`WriteReport`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from ...store import keys
from ..search import TOKENIZER_VERSION
from .documents import Document, Passage, indexed_text, passage_tokens
from .embedding import BATCH_SIZE, EmbeddingError, EmbeddingSpend, PassageEmbedder, passage_embedder
from .port import KnowledgeBaseError
from .vectors import VectorCache

Source = Literal["folder", "notion"]


class StoredDocument(BaseModel):
    """A document as kept in Redis: ``doc_id`` is its source and its id there (``notion:<page id>``,
    ``folder:<path>``)."""

    doc_id: str
    source: Source
    title: str
    path: str
    """Where it lives: a path inside the folder, or the Notion page's title path."""
    url: str | None = None
    """A link to the page (Notion), for answers to cite."""
    edited: str = ""
    """When it was last edited at its source (Notion's ``last_edited_time``), or a digest of a file."""
    root: str | None = None
    """For a Notion page synced under ``--root``: that root page's id."""
    texts: list[str] = Field(default_factory=list)
    tokens: list[list[str]] = Field(default_factory=list)
    tokenizer: int = TOKENIZER_VERSION

    @classmethod
    def of(
        cls, document: Document, *, doc_id: str, source: Source, edited: str = "", root: str | None = None
    ) -> StoredDocument:
        """A parsed document, with the tokens its passages were indexed under."""
        return cls(
            doc_id=doc_id,
            source=source,
            title=document.title,
            path=document.path,
            url=document.url,
            edited=edited,
            root=root,
            texts=[p.text for p in document.passages],
            tokens=[p.tokens for p in document.passages],
        )

    def document(self) -> Document:
        """The searchable document (tokens recomputed when another tokenizer version made them)."""
        fresh = self.tokenizer == TOKENIZER_VERSION
        passages = [
            Passage(text=text, tokens=tokens if fresh else passage_tokens(self.title, text))
            for text, tokens in zip(self.texts, self.tokens, strict=True)
        ]
        return Document(title=self.title, path=self.path, passages=passages, url=self.url)

    def retokenized(self) -> StoredDocument:
        """The same document with tokens of the current tokenizer (itself when they are)."""
        if self.tokenizer == TOKENIZER_VERSION:
            return self
        tokens = [passage_tokens(self.title, text) for text in self.texts]
        return self.model_copy(update={"tokens": tokens, "tokenizer": TOKENIZER_VERSION})


@dataclass
class WriteReport:
    """What writes to the knowledge base did, summed over a sync or an index run."""

    documents: int = 0
    passages: int = 0
    embedded: int = 0
    """Passages whose vectors were computed now (the others' were cached by content)."""
    embedding_cost: str | None = None
    """What computing them cost, as the provider prices it (``$0.0004 (21,410 tokens)``, or the tokens
    when the price is unknown; None without an embedding model)."""
    spend: EmbeddingSpend | None = None
    """The same as figures, so that the reports of several writes add up."""

    def add(self, other: WriteReport) -> None:
        self.documents += other.documents
        self.passages += other.passages
        self.embedded += other.embedded
        if other.spend is not None:
            self.spend = other.spend if self.spend is None else self.spend + other.spend
            self.embedding_cost = str(self.spend)
        else:
            self.embedding_cost = other.embedding_cost or self.embedding_cost


_default_embedder: PassageEmbedder | None = None


@contextmanager
def embedding_with(model: str | None) -> Iterator[None]:
    """Within it, stores made without an ``embedder`` embed with ``model``: how a ``kb`` command hands
    ``TRULOOP_EMBEDDING_MODEL`` to every store its subcommand makes (None: no embedding)."""
    global _default_embedder
    previous, _default_embedder = _default_embedder, passage_embedder(model)
    try:
        yield
    finally:
        _default_embedder = previous


class KnowledgeStore:
    """Reads and writes the documents in Redis; every write moves the version on."""

    def __init__(self, redis: Redis, embedder: PassageEmbedder | None = None) -> None:
        self.redis = redis
        self.embedder = embedder or _default_embedder
        """Embeds the passages on every write, and their vectors are read with them; None: words only."""
        self._vectors = VectorCache(redis)

    async def version(self) -> int:
        """Changes with every write (0 while nothing was ever written)."""
        return int(cast(bytes | None, await self.redis.get(keys.kb_version())) or 0)

    async def documents(self) -> list[StoredDocument]:
        raw = cast(dict[bytes, bytes], await self.redis.hgetall(keys.kb_documents()))
        return [_decode(value) for value in raw.values()]

    async def edited(self, source: Source) -> dict[str, StoredDocument]:
        """Document id -> the stored document, for one source (what a sync compares against)."""
        return {d.doc_id: d for d in await self.documents() if d.source == source}

    async def put(self, documents: Iterable[StoredDocument]) -> WriteReport:
        """Add or replace documents (by id), their passages embedded first when there is an embedder.

        Stored documents whose tokens another tokenizer version made are written again with fresh
        ones, so that the processes stop recomputing them at every rebuild. Raises
        :class:`KnowledgeBaseError` (and writes no document) beyond the passage limit, or when the
        embedding model does not answer.
        """
        new = [d.retokenized() for d in documents]
        if not new:
            return WriteReport()
        stored = {d.doc_id: d for d in await self.documents()}
        stale = [d.retokenized() for d in stored.values() if d.tokenizer != TOKENIZER_VERSION]
        batch: dict[str | bytes, bytes] = {d.doc_id: _encode(d) for d in [*stale, *new]}
        everything = stored | {d.doc_id: d for d in new}
        if (total := sum(len(d.texts) for d in everything.values())) > keys.KB_PASSAGES_MAX:
            raise KnowledgeBaseError(
                f"the knowledge base would hold {total} passages, over its limit of {keys.KB_PASSAGES_MAX}; "
                "index fewer documents (or sync under one --root page)"
            )
        report = WriteReport(documents=len(new), passages=sum(len(d.texts) for d in new))
        if self.embedder is not None:
            report.embedded, report.spend = await self._embed(self.embedder, everything.values())
            report.embedding_cost = str(report.spend)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.kb_documents(), mapping=cast(Any, batch))
            pipe.incr(keys.kb_version())
            await pipe.execute()
        if self.embedder is not None:
            await self._vectors.keep(_digests(self.embedder, everything.values()))
        return report

    async def remove(self, doc_ids: Iterable[str]) -> int:
        """Drop documents by id (and the vectors only they had); how many there were."""
        ids = list(doc_ids)
        if not ids:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.kb_documents(), *ids)
            pipe.incr(keys.kb_version())
            removed, _ = await pipe.execute()
        if self.embedder is not None:
            await self._vectors.keep(_digests(self.embedder, await self.documents()))
        return int(removed)

    async def replace(self, source: Source, documents: Iterable[StoredDocument]) -> tuple[WriteReport, int]:
        """Make ``documents`` the source's whole content: what was written, and how many were removed."""
        new = list(documents)
        gone = set(await self.edited(source)) - {d.doc_id for d in new}
        return await self.put(new), await self.remove(gone)

    async def attach_vectors(self, documents: Iterable[Document]) -> int:
        """Give each passage its cached vector; how many are left without one (all, without an embedder)."""
        passages = [(indexed_text(d.title, p.text), p) for d in documents for p in d.passages]
        if self.embedder is None:
            return len(passages)
        digests = [self.embedder.key(text) for text, _ in passages]
        left = 0
        for (_, passage), vector in zip(passages, await self._vectors.get(digests), strict=True):
            passage.vector = vector
            left += vector is None
        return left

    async def embed_missing(self, documents: Iterable[Document]) -> tuple[int, EmbeddingSpend]:
        """Embed and cache the passages (of documents not stored, e.g. a folder's) that have no cached
        vector; how many, and what it cost. Raises :class:`.EmbeddingError` when the model fails."""
        if self.embedder is None:
            return 0, EmbeddingSpend()
        texts = [indexed_text(d.title, p.text) for d in documents for p in d.passages]
        return await self._embed_texts(self.embedder, texts)

    async def _embed(
        self, embedder: PassageEmbedder, documents: Iterable[StoredDocument]
    ) -> tuple[int, EmbeddingSpend]:
        texts = [indexed_text(d.title, text) for d in documents for text in d.texts]
        try:
            return await self._embed_texts(embedder, texts)
        except EmbeddingError as exc:
            raise KnowledgeBaseError(
                f"could not embed the passages ({exc}); nothing was written: fix TRULOOP_EMBEDDING_MODEL "
                "or the provider's key, or unset it to search by words only"
            ) from None

    async def _embed_texts(
        self, embedder: PassageEmbedder, texts: Iterable[str]
    ) -> tuple[int, EmbeddingSpend]:
        """Embed and cache the texts without a cached vector, a batch at a time (what was paid for stays
        cached when a later batch fails); how many, and what it cost."""
        by_digest = {embedder.key(text): text for text in texts}
        missing = sorted(await self._vectors.missing(by_digest))
        spend = EmbeddingSpend()
        for start in range(0, len(missing), BATCH_SIZE):
            digests = missing[start : start + BATCH_SIZE]
            vectors, cost = await embedder.passages([by_digest[d] for d in digests])
            await self._vectors.put(dict(zip(digests, vectors, strict=True)))
            spend += cost
        return len(missing), spend


def _digests(embedder: PassageEmbedder, documents: Iterable[StoredDocument]) -> list[str]:
    return [embedder.key(indexed_text(d.title, text)) for d in documents for text in d.texts]


def _encode(document: StoredDocument) -> bytes:
    return zlib.compress(document.model_dump_json().encode(), 6)


def _decode(raw: bytes) -> StoredDocument:
    return StoredDocument.model_validate_json(zlib.decompress(raw))


def folder_id(path: str) -> str:
    return f"folder:{path}"


def digest(text: str) -> str:
    """A short digest of a file's text: what tells a changed file from an unchanged one."""
    return format(zlib.crc32(text.encode()), "08x") + f"-{len(text)}"
