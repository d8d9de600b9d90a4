"""The default knowledge base: BM25 over the passages of Markdown documents, one hit per document."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..search import Bm25Index
from .documents import Document, Passage, document, markdown_files
from .index_file import read_index, write_index
from .port import KnowledgeBaseError, KnowledgeHit

SNIPPET_MAX_CHARS = 400


class Bm25KnowledgeBase:
    """BM25 search over Markdown documents; the index is built once, searching is CPU work in memory."""

    def __init__(self, documents: list[Document], sources: Iterable[str] | None = None) -> None:
        self.sources = frozenset(sources if sources is not None else (d.path for d in documents))
        """The relative paths of every file the index was built from, searchable or not."""
        self._documents = [d for d in documents if d.passages]
        self._passage_doc: list[int] = []
        self._passages: list[Passage] = []
        for doc_index, doc in enumerate(self._documents):
            for passage in doc.passages:
                self._passage_doc.append(doc_index)
                self._passages.append(passage)
        self._index = Bm25Index([p.tokens for p in self._passages])

    @classmethod
    def build(cls, folder: str | os.PathLike[str]) -> Bm25KnowledgeBase:
        """Read every ``.md`` file under ``folder`` and index it; raises if the folder does not exist."""
        root = Path(folder)
        if not root.exists():
            raise KnowledgeBaseError(f"folder {str(root)!r} does not exist")
        if not root.is_dir():
            raise KnowledgeBaseError(f"{str(root)!r} is not a folder")
        documents = []
        for file in markdown_files(root):
            try:
                text = file.read_text(encoding="utf-8-sig", errors="replace")
            except OSError as exc:
                raise KnowledgeBaseError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
            documents.append(document(file.relative_to(root).as_posix(), text))
        return cls(documents, sources=[d.path for d in documents])

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Bm25KnowledgeBase:
        """Read an index written by :meth:`save`; raises :class:`KnowledgeBaseError` for any other file."""
        documents, sources = read_index(path)
        return cls(documents, sources=sources)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index as JSON (documents, passages and their tokens), atomically."""
        write_index(path, self._documents, self.sources)

    @property
    def documents(self) -> list[Document]:
        """The searchable documents (those with at least one passage)."""
        return list(self._documents)

    @property
    def document_count(self) -> int:
        """How many documents have at least one searchable passage."""
        return len(self._documents)

    @property
    def passage_count(self) -> int:
        """How many passages are indexed."""
        return len(self._passages)

    def search_sync(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """The best passage of each matching document, best first; documents scoring zero are left out."""
        if limit < 1:
            return []
        hits: list[KnowledgeHit] = []
        seen: set[int] = set()
        for passage_index, score in self._index.ranked(query):
            doc_index = self._passage_doc[passage_index]
            if doc_index in seen:
                continue
            seen.add(doc_index)
            doc = self._documents[doc_index]
            hits.append(
                KnowledgeHit(
                    title=doc.title,
                    path=doc.path,
                    url=doc.url,
                    snippet=_snippet(self._passages[passage_index].text),
                    score=round(score, 4),
                )
            )
            if len(hits) == limit:
                break
        return hits

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """See :meth:`search_sync`; runs inline (well under a millisecond for a handbook-sized folder)."""
        return self.search_sync(query, limit=limit)


def _snippet(text: str) -> str:
    if len(text) <= SNIPPET_MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, SNIPPET_MAX_CHARS - 1)
    cut = cut if cut > SNIPPET_MAX_CHARS // 2 else SNIPPET_MAX_CHARS - 1
    return text[:cut].rstrip() + "…"
