"""The default knowledge base: BM25 over the passages of Markdown documents, one hit per document.

When the passages carry vectors (an embedding model is configured) and the question comes with one,
the documents are ranked by words and by meaning, and the two rankings fused by reciprocal rank
fusion: a document's score is the sum of ``1 / (60 + rank)`` over the rankings it is in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from ..search import Bm25Index
from .documents import Document, Passage, document, markdown_files
from .index_file import read_index, write_index
from .port import KnowledgeBaseError, KnowledgeHit

if TYPE_CHECKING:
    import numpy as np

SNIPPET_MAX_CHARS = 400
RRF_K = 60
"""Reciprocal rank fusion's constant: ranks far down a list count little, and no list dominates."""
MIN_SIMILARITY = 0.2
"""A passage less similar to the question than this (cosine) is not ranked by meaning at all: with
OpenAI's text-embedding-3 models unrelated texts score about 0.0-0.2, so a question about nothing in
the documents still finds nothing rather than the least unrelated pages."""
DEPTH = 100
"""Passages of each ranking that are fused: enough for ten documents even when one has many passages."""


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
        self._vectors = _matrix(self._passages)

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

    @property
    def has_vectors(self) -> bool:
        """Whether any passage can be found by meaning."""
        return self._vectors is not None

    def search_sync(
        self, query: str, *, limit: int = 5, query_vector: np.ndarray | None = None
    ) -> list[KnowledgeHit]:
        """The best passage of each matching document, best first; documents matching neither the
        words nor (with ``query_vector``, the question's unit vector) the meaning are left out."""
        if limit < 1:
            return []
        vectors = self._vectors
        if query_vector is None or vectors is None or query_vector.shape != vectors.shape[1:]:
            ranked = self._index.ranked(query)
        else:
            ranked = self._fused(query, vectors @ query_vector)
        hits: list[KnowledgeHit] = []
        seen: set[int] = set()
        for passage_index, score in ranked:
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

    def _fused(self, query: str, similarity: np.ndarray) -> Iterator[tuple[int, float]]:
        """Each matching document's best passage with the document's fused score, best first.

        Documents are ranked by their best passage in each ranking, so a document whose words match
        one passage and whose meaning matches another gains from both; its snippet is the passage
        that ranks best in the two rankings together. Equal scores (first in one ranking and second in
        the other, say) go to the document closer to the question in meaning.
        """
        import numpy as np

        by_words = [p for p, _ in islice(self._index.ranked(query), DEPTH)]
        # The DEPTH nearest without sorting them all, then those in order (in passage order when equal).
        candidates = np.arange(len(similarity))
        if len(similarity) > DEPTH:
            candidates = np.sort(np.argpartition(-similarity, DEPTH)[:DEPTH])
        nearest = candidates[np.argsort(-similarity[candidates], kind="stable")]
        by_meaning = [int(p) for p in nearest if similarity[p] >= MIN_SIMILARITY]
        doc_score: dict[int, float] = {}
        passage_score: dict[int, float] = {}
        for ranking in (by_words, by_meaning):
            doc_rank: dict[int, int] = {}
            for passage_rank, passage in enumerate(ranking, 1):
                passage_score[passage] = passage_score.get(passage, 0.0) + 1 / (RRF_K + passage_rank)
                doc_rank.setdefault(self._passage_doc[passage], len(doc_rank) + 1)
            for doc, rank in doc_rank.items():
                doc_score[doc] = doc_score.get(doc, 0.0) + 1 / (RRF_K + rank)
        best: dict[int, int] = {}
        for passage, score in passage_score.items():
            doc = self._passage_doc[passage]
            if doc not in best or score > passage_score[best[doc]]:
                best[doc] = passage
        closeness = {doc: float(similarity[passage]) for doc, passage in best.items()}
        for doc in sorted(doc_score, key=lambda d: (-doc_score[d], -closeness[d], d)):
            yield best[doc], doc_score[doc]

    async def search(self, query: str, *, limit: int = 5) -> list[KnowledgeHit]:
        """See :meth:`search_sync`; runs inline (well under a millisecond for a handbook-sized folder)."""
        return self.search_sync(query, limit=limit)


def _matrix(passages: list[Passage]) -> np.ndarray | None:
    """The passages' vectors as rows (zeros where a passage has none), or None when none has one."""
    vectors = [p.vector for p in passages]
    dims = next((v.shape for v in vectors if v is not None), None)
    if dims is None:
        return None
    import numpy as np

    matrix = np.zeros((len(passages), *dims), dtype=np.float32)
    for row, (passage, vector) in enumerate(zip(passages, vectors, strict=True)):
        if vector is not None and vector.shape == dims:
            matrix[row] = vector
            passage.vector = matrix[row]  # a view: each vector is held once (6 KB at 1,536 dimensions)
    return matrix


def _snippet(text: str) -> str:
    if len(text) <= SNIPPET_MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, SNIPPET_MAX_CHARS - 1)
    cut = cut if cut > SNIPPET_MAX_CHARS // 2 else SNIPPET_MAX_CHARS - 1
    return text[:cut].rstrip() + "…"
