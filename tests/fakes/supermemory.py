"""A local stand-in for the Supermemory v3 API: documents in memory, word/bigram-overlap search.

Follows the shape documented in ``truloop_assistant.backends.memory``; every endpoint checks
``Authorization: Bearer <api_key>`` (401 otherwise).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SUPERMEMORY_KEY = "sm_test_key"


def _grams(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return set(words) | {w[i : i + 2] for w in words for i in range(len(w) - 1)}


@dataclass
class FakeSupermemory:
    api_key: str = SUPERMEMORY_KEY
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    """(method, path, headers) of every request."""
    failures: list[int] = field(default_factory=list)
    """Statuses to answer the next requests with, before answering normally."""
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v3/documents", self._add, methods=["POST"]),
                Route("/v3/documents/list", self._list, methods=["POST"]),
                Route("/v3/documents/{doc_id}", self._get, methods=["GET"]),
                Route("/v3/documents/{doc_id}", self._delete, methods=["DELETE"]),
                Route("/v3/search", self._search, methods=["POST"]),
            ]
        )

    def _check(self, request: Request) -> Response | None:
        self.requests.append((request.method, request.url.path, dict(request.headers)))
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return JSONResponse({"error": "Unauthorized", "details": "invalid API key"}, status_code=401)
        if self.failures:
            return JSONResponse({"error": "Internal error"}, status_code=self.failures.pop(0))
        return None

    async def _add(self, request: Request) -> Response:
        if (denied := self._check(request)) is not None:
            return denied
        body = await request.json()
        if not isinstance(body.get("content"), str) or not body["content"]:
            return JSONResponse({"error": "content is required"}, status_code=400)
        doc_id = secrets.token_urlsafe(12)
        self.documents[doc_id] = {
            "id": doc_id,
            "content": body["content"],
            "containerTags": list(body.get("containerTags") or []),
            "createdAt": datetime.now(UTC).isoformat(),
            "status": "done",
        }
        return JSONResponse({"id": doc_id, "status": "queued"})

    def _tagged(self, tags: list[str]) -> list[dict[str, Any]]:
        return [d for d in self.documents.values() if d["containerTags"] == tags]

    async def _search(self, request: Request) -> Response:
        if (denied := self._check(request)) is not None:
            return denied
        body = await request.json()
        wanted = _grams(body.get("q") or "")
        scored = []
        for doc in self._tagged(body.get("containerTags") or []):
            overlap = len(wanted & _grams(doc["content"]))
            if overlap:
                scored.append((overlap / (len(wanted) or 1), doc))
        scored.sort(key=lambda s: (s[0], s[1]["createdAt"]), reverse=True)
        results = [
            {
                "documentId": doc["id"],
                "chunks": [{"content": doc["content"], "score": score, "isRelevant": True}],
                "score": score,
                "createdAt": doc["createdAt"],
                "updatedAt": doc["createdAt"],
                "metadata": None,
                "title": None,
                "type": "text",
            }
            for score, doc in scored[: int(body.get("limit") or 10)]
        ]
        return JSONResponse({"results": results, "timing": 3, "total": len(results)})

    async def _list(self, request: Request) -> Response:
        if (denied := self._check(request)) is not None:
            return denied
        body = await request.json()
        docs = sorted(
            self._tagged(body.get("containerTags") or []), key=lambda d: d["createdAt"], reverse=True
        )
        page = docs[: int(body.get("limit") or 50)]
        return JSONResponse({"memories": page, "pagination": {"currentPage": 1, "totalItems": len(docs)}})

    async def _get(self, request: Request) -> Response:
        if (denied := self._check(request)) is not None:
            return denied
        doc = self.documents.get(request.path_params["doc_id"])
        if doc is None:
            return JSONResponse({"error": "Document not found"}, status_code=404)
        return JSONResponse(doc)

    async def _delete(self, request: Request) -> Response:
        if (denied := self._check(request)) is not None:
            return denied
        if self.documents.pop(request.path_params["doc_id"], None) is None:
            return JSONResponse({"error": "Document not found"}, status_code=404)
        return Response(status_code=204)
