"""The knowledge base's documents in Redis, where every API and worker process finds the newest.

Writers (``kb index DIR``, ``kb sync-notion``) put documents by source: each document is one hash
field (its title, where it lives, when it was last edited, and its passages with their tokens),
compressed. Every write bumps a version number; a process searching the knowledge base compares it
now and then and rebuilds its in-memory index when it moved (:class:`.live.LiveKnowledgeBase`), so a
sync is searchable within about a second, without a restart.

Bounded: at most ``keys.KB_PASSAGES_MAX`` passages in all (a write that would go beyond is refused,
naming the limit), each a few hundred characters; the whole base is a few tens of MB at most.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from ...store import keys
from ..search import TOKENIZER_VERSION, tokenize
from .documents import Document, Passage
from .port import KnowledgeBaseError

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
            Passage(text=text, tokens=tokens if fresh else tokenize(f"{self.title}\n{text}"))
            for text, tokens in zip(self.texts, self.tokens, strict=True)
        ]
        return Document(title=self.title, path=self.path, passages=passages, url=self.url)


@dataclass
class WriteReport:
    """What writes to the knowledge base did, summed over a sync or an index run."""

    documents: int = 0
    passages: int = 0
    embedded: int = 0
    """Passages whose vectors were computed now (the others' were cached by content)."""
    embedding_cost: str | None = None
    """What computing them cost, as the provider prices it (None without an embedding model)."""

    def add(self, other: WriteReport) -> None:
        self.documents += other.documents
        self.passages += other.passages
        self.embedded += other.embedded
        self.embedding_cost = other.embedding_cost or self.embedding_cost


class KnowledgeStore:
    """Reads and writes the documents in Redis; every write moves the version on."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

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
        """Add or replace documents (by id)."""
        new = list(documents)
        batch: dict[str | bytes, bytes] = {d.doc_id: _encode(d) for d in new}
        if not batch:
            return WriteReport()
        await self._check_bound(adding=batch)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.kb_documents(), mapping=cast(Any, batch))
            pipe.incr(keys.kb_version())
            await pipe.execute()
        return WriteReport(documents=len(new), passages=sum(len(d.texts) for d in new))

    async def remove(self, doc_ids: Iterable[str]) -> int:
        """Drop documents by id; how many there were."""
        ids = list(doc_ids)
        if not ids:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.kb_documents(), *ids)
            pipe.incr(keys.kb_version())
            removed, _ = await pipe.execute()
        return int(removed)

    async def replace(self, source: Source, documents: Iterable[StoredDocument]) -> tuple[WriteReport, int]:
        """Make ``documents`` the source's whole content: what was written, and how many were removed."""
        new = list(documents)
        gone = set(await self.edited(source)) - {d.doc_id for d in new}
        return await self.put(new), await self.remove(gone)

    async def _check_bound(self, *, adding: dict[str | bytes, bytes]) -> None:
        current: dict[str | bytes, int] = {d.doc_id: len(d.texts) for d in await self.documents()}
        current.update({doc_id: len(_decode(raw).texts) for doc_id, raw in adding.items()})
        if (total := sum(current.values())) > keys.KB_PASSAGES_MAX:
            raise KnowledgeBaseError(
                f"the knowledge base would hold {total} passages, over its limit of {keys.KB_PASSAGES_MAX}; "
                "index fewer documents (or sync under one --root page)"
            )


def _encode(document: StoredDocument) -> bytes:
    return zlib.compress(document.model_dump_json().encode(), 6)


def _decode(raw: bytes) -> StoredDocument:
    return StoredDocument.model_validate_json(zlib.decompress(raw))


def folder_id(path: str) -> str:
    return f"folder:{path}"


def digest(text: str) -> str:
    """A short digest of a file's text: what tells a changed file from an unchanged one."""
    return format(zlib.crc32(text.encode()), "08x") + f"-{len(text)}"
