"""Reading request bodies with a size cap (the 413 check comes before anything else)."""

from __future__ import annotations

from fastapi import Request

from ..errors import PayloadTooLarge


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
