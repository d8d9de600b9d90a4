"""A local stand-in for the Supermemory v3 API: records every request, keeps documents, does not rank.

Follows the shape documented in ``truloop_assistant.backends.memory.supermemory``; every endpoint
checks ``Authorization: Bearer <api_key>`` (401 otherwise). Documents are kept in memory so saving,
listing, the owner check and deleting behave like the real service. Ranking is Supermemory's own
business, so search answers with a reply queued by the test, or else with every document of the
requested container tags, newest first (enough to check scoping and limits).

Container tags behave as Supermemory's documentation states them (its API reference, "Add document"
and "Batch add documents": a tag is at most 100 characters of ``^[a-zA-Z0-9_:-]+$``, else 400; its
"Filtering" page: "Arrays must match exactly", so a search or listing in ``["a"]`` sees nothing
tagged ``["a", "b"]`` or ``["b"]``).
"""

from __future__ import annotations

import json
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
TAG = re.compile(r"[a-zA-Z0-9_:-]{1,100}")
"""A container tag Supermemory accepts."""


@dataclass
class RecordedRequest:
    """One request as the adapter sent it."""

    method: str
    path: str
    """The path as sent, still percent-encoded."""
    headers: dict[str, str]
    body: Any
    """The parsed JSON body; None when there was none."""


@dataclass
class FakeSupermemory:
    """The fake service; serve ``app()`` (e.g. with ``tests.support.served``) and point the adapter at it."""

    api_key: str = SUPERMEMORY_KEY
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    replies: list[tuple[int, Any]] = field(default_factory=list)
    """(status, JSON body) to answer the next authorized requests with, whatever they ask."""
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v3/documents", self._add, methods=["POST"]),
                Route("/v3/documents/list", self._list, methods=["POST"]),
                Route("/v3/documents/{doc_id:path}", self._get, methods=["GET"]),
                Route("/v3/documents/{doc_id:path}", self._delete, methods=["DELETE"]),
                Route("/v3/search", self._search, methods=["POST"]),
            ]
        )

    def reply(self, body: Any, status: int = 200) -> None:
        """Answer the next authorized request with this JSON body (None: no body) and status."""
        self.replies.append((status, body))

    async def _check(self, request: Request) -> Response | None:
        raw = await request.body()
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.scope["raw_path"].decode(),
                headers=dict(request.headers),
                body=json.loads(raw) if raw else None,
            )
        )
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return JSONResponse({"error": "Unauthorized", "details": "invalid API key"}, status_code=401)
        if self.replies:
            status, body = self.replies.pop(0)
            return Response(status_code=status) if body is None else JSONResponse(body, status_code=status)
        tags = (self.requests[-1].body or {}).get("containerTags") if request.method == "POST" else []
        if not all(isinstance(tag, str) and TAG.fullmatch(tag) for tag in tags or []):
            return JSONResponse({"error": "Invalid request parameters", "details": "containerTags"}, 400)
        return None

    def _tagged(self, tags: list[str]) -> list[dict[str, Any]]:
        docs = [d for d in self.documents.values() if d["containerTags"] == tags]
        return sorted(docs, key=lambda d: d["createdAt"], reverse=True)

    async def _add(self, request: Request) -> Response:
        if (answer := await self._check(request)) is not None:
            return answer
        body = self.requests[-1].body
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

    async def _search(self, request: Request) -> Response:
        if (answer := await self._check(request)) is not None:
            return answer
        body = self.requests[-1].body
        results = [
            {
                "documentId": doc["id"],
                "chunks": [{"content": doc["content"], "score": 0.5, "isRelevant": True}],
                "score": 0.5,
                "createdAt": doc["createdAt"],
                "updatedAt": doc["createdAt"],
                "metadata": None,
                "title": None,
                "type": "text",
            }
            for doc in self._tagged(body.get("containerTags") or [])[: int(body.get("limit") or 10)]
        ]
        return JSONResponse({"results": results, "timing": 3, "total": len(results)})

    async def _list(self, request: Request) -> Response:
        if (answer := await self._check(request)) is not None:
            return answer
        body = self.requests[-1].body
        docs = self._tagged(body.get("containerTags") or [])
        page = docs[: int(body.get("limit") or 50)]
        return JSONResponse({"memories": page, "pagination": {"currentPage": 1, "totalItems": len(docs)}})

    async def _get(self, request: Request) -> Response:
        if (answer := await self._check(request)) is not None:
            return answer
        doc = self.documents.get(request.path_params["doc_id"])
        if doc is None:
            return JSONResponse({"error": "Document not found"}, status_code=404)
        return JSONResponse(doc)

    async def _delete(self, request: Request) -> Response:
        if (answer := await self._check(request)) is not None:
            return answer
        if self.documents.pop(request.path_params["doc_id"], None) is None:
            return JSONResponse({"error": "Document not found"}, status_code=404)
        return Response(status_code=204)
