"""A local OpenAI-compatible embeddings API (``POST /v1/embeddings``): deterministic, and a little semantic.

A text's vector is a hashed bag of its features in ``DIMENSIONS`` dimensions, L2-normalised: English
words (lowercase, a plural "s" dropped) and the syllable bigrams of Korean words, so particles barely
move it. A tiny synonym table adds a shared concept feature, with more weight, to words that mean the
same ("payday", "salary", "월급", "급여"), so a paraphrase in other words, or in the other language,
lands near its passage, which word search cannot do. Unrelated texts share no feature and score
about 0.

It answers as OpenAI does (``float`` or ``base64`` vectors, ``usage.prompt_tokens`` counting words),
checks the key (401), counts what it was asked (``requests``: the inputs of each request), and fails
every request with ``fail_with`` (e.g. 500) when that is set.
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic_ai.embeddings import EmbeddingModel
from pydantic_ai.embeddings.openai import OpenAIEmbeddingModel
from pydantic_ai.providers.openai import OpenAIProvider
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

EMBEDDINGS_KEY = "sk-test-embeddings"
MODEL = "text-embedding-3-small"
DIMENSIONS = 256
CONCEPT_WEIGHT = 3.0

SYNONYMS = {
    "salary": ("salary", "payday", "paycheck", "wage", "급여", "월급", "봉급"),
    "remote": ("remote", "remotely", "wfh", "재택", "원격"),
    "leave": ("vacation", "pto", "holiday", "휴가", "연차"),
    "parking": ("parking", "park", "car", "주차", "차량"),
    "visitor": ("visitor", "guest", "friend", "방문객", "손님"),
    "badge": ("badge", "card", "출입증"),
    "smoking": ("smoke", "smoking", "cigarette", "흡연", "담배"),
    "laptop": ("laptop", "notebook", "macbook", "노트북"),
    "trip": ("trip", "travel", "출장"),
    "meal": ("meal", "food", "lunch", "dinner", "식비", "식대", "밥값"),
    "baby": ("baby", "birth", "newborn", "출산", "애기", "아기"),
}
"""Concept -> words that mean it (English whole words; Korean as a part of a word, before its particle)."""
_STOPWORDS = frozenset(
    "a an the is are am be do does did i my me you your we our it its to of in on at for and or "
    "what when where how who can could should will there this that with".split()
)
_WORD = re.compile(r"\w+")
_HANGUL = re.compile("[\uac00-\ud7a3]")


def features(text: str) -> dict[str, float]:
    """The weighted features of a text."""
    found: dict[str, float] = {}
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if _HANGUL.search(word):
            parts = [word[i : i + 2] for i in range(len(word) - 1)] or [word]
            concepts = [
                c for c, words in SYNONYMS.items() if any(w in word for w in words if _HANGUL.search(w))
            ]
        else:
            if word in _STOPWORDS:
                continue
            word = word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
            parts = [word]
            concepts = [c for c, words in SYNONYMS.items() if word in words]
        for part in parts:
            found[part] = found.get(part, 0.0) + 1.0
        for concept in concepts:
            found[f"#{concept}"] = found.get(f"#{concept}", 0.0) + CONCEPT_WEIGHT
    return found


def embed(text: str) -> np.ndarray:
    """A text's unit vector (zeros for a text without features)."""
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for feature, weight in features(text).items():
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        sign = 1.0 if digest[0] & 1 else -1.0
        vector[int.from_bytes(digest[1:5], "little") % DIMENSIONS] += sign * weight
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


@dataclass
class FakeEmbeddings:
    api_key: str = EMBEDDINGS_KEY
    requests: list[list[str]] = field(default_factory=list)
    """The inputs of every request, in order."""
    fail_with: int | None = None
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])])

    def model(self) -> EmbeddingModel:
        """A pydantic-ai embedding model that asks this fake (as ``openai:`` with :meth:`env` does)."""
        return OpenAIEmbeddingModel(
            MODEL, provider=OpenAIProvider(base_url=f"{self.url}/v1", api_key=self.api_key)
        )

    def env(self) -> dict[str, str]:
        """The variables that make ``openai:text-embedding-3-small`` ask this fake."""
        return {"OPENAI_BASE_URL": f"{self.url}/v1", "OPENAI_API_KEY": self.api_key}

    @property
    def embedded(self) -> list[str]:
        """Every text it was asked to embed, in order."""
        return [text for inputs in self.requests for text in inputs]

    async def _embeddings(self, request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        body = await request.json()
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) and t for t in inputs):
            return _error(400, "'input' must be a non-empty string or array of non-empty strings", None)
        self.requests.append(list(inputs))
        if self.fail_with is not None:
            return _error(self.fail_with, "The server had an error while processing your request.", None)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector = embed(text)
            value: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode() if as_base64 else vector.tolist()
            )
            data.append({"object": "embedding", "index": index, "embedding": value})
        tokens = sum(len(text.split()) for text in inputs)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", MODEL),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def _error(status: int, message: str, code: str | None) -> JSONResponse:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status)
