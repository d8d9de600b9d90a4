"""Passages and questions as vectors, for knowledge search by meaning (``TRULOOP_EMBEDDING_MODEL``).

A :class:`PassageEmbedder` asks a pydantic-ai embedding model (any provider pydantic-ai knows; an
OpenAI-compatible endpoint through ``OPENAI_BASE_URL``) in batches and hands back unit-length float32
vectors, so that a dot product is the cosine. What it cost is summed as an :class:`EmbeddingSpend`:
the provider's price when pydantic-ai knows it, else the tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ...errors import ServiceError

if TYPE_CHECKING:
    import numpy as np
    from pydantic_ai.embeddings import EmbeddingModel

BATCH_SIZE = 64
"""Passages per request: far below the providers' limits (OpenAI: 2,048 inputs, 300,000 tokens)."""


class EmbeddingError(ServiceError):
    """The embedding model did not answer (unknown provider, missing key, network, provider error)."""


@dataclass(frozen=True)
class EmbeddingSpend:
    """What embedding cost: tokens, and the price when the provider's prices are known."""

    tokens: int = 0
    price: Decimal | None = Decimal(0)
    """In US dollars; None when any request's price is unknown."""

    def __add__(self, other: EmbeddingSpend) -> EmbeddingSpend:
        price = None if self.price is None or other.price is None else self.price + other.price
        return EmbeddingSpend(self.tokens + other.tokens, price)

    def __str__(self) -> str:
        """``$0.0004 (21,410 tokens)``, ``21,410 tokens (price unknown)``, or ``nothing``."""
        if not self.tokens and not self.price:
            return "nothing"
        if self.price is None:
            return f"{self.tokens:,} tokens (price unknown)"
        places = max(4, 1 - self.price.adjusted()) if self.price else 0  # two significant digits of cents
        dollars = f"{self.price:.{places}f}".rstrip("0").rstrip(".") if places else "0"
        return f"${dollars} ({self.tokens:,} tokens)"


class PassageEmbedder:
    """An embedding model, for passages (as documents) and questions (as queries)."""

    def __init__(self, model: str | EmbeddingModel) -> None:
        from pydantic_ai.embeddings import Embedder

        self.model_name = model if isinstance(model, str) else f"{model.system}:{model.model_name}"
        """What the vectors are keyed by: vectors of another model are never mixed in."""
        self._embedder = Embedder(model)

    def key(self, text: str) -> str:
        """The cache key of a text's vector: a digest of the model and the text."""
        return hashlib.blake2b(f"{self.model_name}\n{text}".encode(), digest_size=16).hexdigest()

    async def passages(self, texts: Sequence[str]) -> tuple[np.ndarray, EmbeddingSpend]:
        """One unit vector per text (rows, float32), in batches, and what it cost."""
        import numpy as np

        rows: list[np.ndarray] = []
        spend = EmbeddingSpend()
        for start in range(0, len(texts), BATCH_SIZE):
            batch = list(texts[start : start + BATCH_SIZE])
            result = await self._embed(batch, "document")
            rows.append(_unit_rows(result.embeddings, len(batch)))
            spend += _spend(result)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32), spend
        return np.vstack(rows), spend

    async def query(self, text: str) -> np.ndarray:
        """A question's unit vector."""
        result = await self._embed([text], "query")
        return _unit_rows(result.embeddings, 1)[0]

    async def _embed(self, texts: list[str], kind: Any) -> Any:
        try:
            return await self._embedder.embed(texts, input_type=kind)
        except Exception as exc:  # a provider's errors are many; each means "no vectors now"
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EmbeddingError(f"{self.model_name}: {reason[:300]}") from exc


def passage_embedder(model: str | None) -> PassageEmbedder | None:
    """The embedder of ``TRULOOP_EMBEDDING_MODEL``, or None when it is not set (search by words only)."""
    return PassageEmbedder(model) if model else None


def _unit_rows(embeddings: Sequence[Sequence[float]], expected: int) -> np.ndarray:
    import numpy as np

    rows = np.asarray(embeddings, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[0] != expected:
        raise EmbeddingError(f"expected {expected} vectors, got an array of shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1)


def _spend(result: Any) -> EmbeddingSpend:
    tokens = int(result.usage.input_tokens or 0)
    try:
        price: Decimal | None = Decimal(result.cost().total_price)
    except (LookupError, AssertionError, ValueError):  # a model or provider genai-prices does not know
        price = None
    return EmbeddingSpend(tokens, price)
