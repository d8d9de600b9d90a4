"""The files of the dev chat (``/dev``): a picture, PDF or voice note kept for a message, and served back.

The local channel has no file host: the page posts a file's bytes, the server keeps them in Redis
(``store.uploads``) and answers the ``upload:<id>`` URL the message then names in its ``files``, as a
Sendbird app uploads a file and sends a FILE message naming it. A message may name only uploads of
its own channel that are still kept; the size it carries is the kept file's, not the page's word.
The page shows a file by asking for it back: served with the type its bytes show
(``protocol.file_types``), never the one its name or the browser stated.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ..errors import BadRequest, NotFound, PayloadTooLarge
from ..protocol.file_types import detect
from ..protocol.files import UPLOAD_SCHEME, Attachment
from ..store.uploads import Uploads
from .body import read_body
from .budget import redis_budget
from .deps import ServicesDep

UPLOAD_ID = r"[A-Za-z0-9_-]{1,64}"
"""What follows ``upload:`` in a kept file's URL (and ends the path it is served at)."""
FILE_BUDGET_S = 5.0
"""How long writing or reading a file's bytes (up to ``TRULOOP_MAX_FILE_BYTES``) may wait on Redis."""


class PostedFile(BaseModel):
    """A file a posted message carries: an upload of the channel, as ``POST …/uploads`` answered it."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(pattern=f"^{UPLOAD_SCHEME}{UPLOAD_ID}$", examples=["upload:Zk3v9Qm1xL0aTb7c"])
    name: str = Field(default="", max_length=255, examples=["IMG_0412.HEIC"])
    stated_type: str = Field(default="", max_length=127, examples=["image/heic"])
    size: int | None = Field(
        default=None, ge=0, description="Ignored: the message carries the size of the file as kept"
    )


def uploads(services: ServicesDep) -> Uploads:
    return Uploads(services.redis, max_bytes=services.settings.max_file_bytes)


def _stated_type(request: Request) -> str:
    """The type the browser states for the body (``image/png``), without parameters; empty if none."""
    stated = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return "" if stated == "application/octet-stream" else stated[:127]


async def keep(request: Request, channel_url: str, name: str, services: ServicesDep) -> dict[str, Any]:
    """Keep the request's body as a file of the channel: the file to post, and the type its bytes show."""
    store = uploads(services)
    try:
        data = await read_body(request, store.max_bytes)
    except PayloadTooLarge:
        raise PayloadTooLarge(
            f"the file is larger than {store.max_bytes} bytes (TRULOOP_MAX_FILE_BYTES); nothing was kept",
            code="file_too_large",
        ) from None
    if not data:
        raise BadRequest("the request's body is the file's bytes, and it is empty", code="empty_file")
    async with redis_budget(FILE_BUDGET_S):
        url = await store.put(channel_url, data)
    found = detect(data)
    return {
        "file": {"url": url, "name": name, "stated_type": _stated_type(request), "size": len(data)},
        "media_type": found.media_type if found is not None else None,
    }


async def attachments(
    services: ServicesDep, channel_url: str, files: list[PostedFile]
) -> tuple[Attachment, ...]:
    """The posted files as the message's attachments, each one an upload the channel still keeps."""
    store = uploads(services)
    found: list[Attachment] = []
    async with redis_budget():
        for file in files:
            size = await store.size(channel_url, file.url)
            if size is None:
                raise BadRequest(
                    f"{file.url} is not a file of this channel (not uploaded here, or expired)",
                    code="unknown_upload",
                )
            found.append(Attachment(url=file.url, name=file.name, stated_type=file.stated_type, size=size))
    return tuple(found)


async def served(services: ServicesDep, channel_url: str, upload_id: str) -> Response:
    """A kept file's bytes, typed by what they are (``nosniff``: the browser takes that type as given).

    A file of a type the server does not read is sent as ``application/octet-stream``, to be saved
    rather than shown.
    """
    async with redis_budget(FILE_BUDGET_S):
        data = await uploads(services).get(channel_url, f"{UPLOAD_SCHEME}{upload_id}")
    if data is None:
        raise NotFound("no such file in this channel (not uploaded here, or expired)", code="unknown_upload")
    found = detect(data)
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private, max-age=3600"}
    if found is None:
        headers["Content-Disposition"] = "attachment"
    media_type = found.media_type if found is not None else "application/octet-stream"
    return Response(data, media_type=media_type, headers=headers)
