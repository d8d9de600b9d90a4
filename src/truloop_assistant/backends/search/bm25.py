"""BM25 ranking (``bm25s``) of tokenized texts against a query tokenized the same way."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .tokenize import tokenize

if TYPE_CHECKING:
    import bm25s


class Bm25Index:
    """A BM25 index over texts given as token lists; building it is CPU work, searching is fast."""

    def __init__(self, corpus: Sequence[list[str]]) -> None:
        self._retriever = _retriever(corpus) if any(corpus) else None

    def ranked(self, query: str) -> Iterator[tuple[int, float]]:
        """Each matching text as ``(index, score)``, best first, in corpus order among equal scores."""
        if self._retriever is None:
            return
        vocab: dict[Any, int] = self._retriever.vocab_dict
        ids = [vocab[t] for t in tokenize(query) if t in vocab]
        if not ids:
            return
        import numpy as np

        scores = self._retriever.get_scores_from_ids(ids)
        matching = np.flatnonzero(scores > 0)
        order = matching[np.argsort(-scores[matching], kind="stable")]
        # Lazily: a caller that stops after a few hits does not pay for converting thousands.
        for index in order.tolist():
            yield index, float(scores[index])


def _retriever(corpus: Sequence[list[str]]) -> bm25s.BM25:
    # Imported on first use: bm25s and numpy take a noticeable part of a second to import.
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(list(corpus), show_progress=False)
    return retriever
