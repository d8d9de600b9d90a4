"""Reads a file a person's message names, from wherever the channel it came through keeps it.

Sendbird keeps files on its file hosts: fetched over HTTPS (``file_fetch``), only from
``TRULOOP_SENDBIRD_FILE_HOSTS``, with the ``Api-Token`` header for one Sendbird serves only with a key
(``require_auth``). The local channel keeps its uploads in Redis (``store.uploads``): read from there,
never fetched. A file whose message states a size above the limit is refused without a request.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from ..protocol.files import UPLOAD_SCHEME, Attachment
from ..store.uploads import Uploads
from .file_fetch import FetchResult, Refused, fetch, typed


@dataclass
class FileReader:
    hosts: list[str]
    max_bytes: int
    api_token: str | None
    client: httpx.AsyncClient
    uploads: Uploads | None = None
    """The local channel's uploads (None: an ``upload:`` URL is not one this server reads)."""

    async def read(self, channel_url: str, attachment: Attachment) -> FetchResult:
        """The file's bytes and type (read from its bytes), or why it was not taken."""
        if attachment.size is not None and attachment.size > self.max_bytes:
            return Refused("too_big", f"stated size {attachment.size} > {self.max_bytes}")
        if attachment.url.startswith(UPLOAD_SCHEME):
            return await self._upload(channel_url, attachment.url)
        token = self.api_token if attachment.require_auth else None
        return await fetch(
            attachment.url, hosts=self.hosts, max_bytes=self.max_bytes, api_token=token, client=self.client
        )

    async def _upload(self, channel_url: str, url: str) -> FetchResult:
        data = await self.uploads.get(channel_url, url) if self.uploads is not None else None
        if data is None:
            return Refused("unreachable", "no such upload (expired, or another channel's)")
        if len(data) > self.max_bytes:
            return Refused("too_big", f"{len(data)} bytes > {self.max_bytes}", read=len(data))
        return typed(data)
