"""``GET /api/v1/agent/protocol``: the device methods' JSON Schemas, for the app team (no auth)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from ..deferred.method_schemas import protocol_document

router = APIRouter(tags=["device"])

_DOCUMENT = protocol_document()


@router.get("/api/v1/agent/protocol")
async def protocol(response: Response) -> dict[str, Any]:
    """The protocol's version (``protocol_version``); each built-in device method's version (``since``),
    ``params``, ``result`` and error schemas, as the server checks them."""
    response.headers["Cache-Control"] = "public, max-age=300"
    return _DOCUMENT
