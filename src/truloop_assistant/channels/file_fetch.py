"""Fetching a file a person sent (a picture, a document, a voice note) from where the chat keeps it.

Only from the hosts ``TRULOOP_SENDBIRD_FILE_HOSTS`` lists, checked before any connection and again for
every redirect (followed here, at most ``MAX_REDIRECTS``, never off the list). Sendbird keeps files
encrypted where the application turns file encryption on, and a file sent with ``require_auth`` is
served only with a key: a chat app's SDK adds the user's ``auth`` parameter, a server sends its API
token in the ``Api-Token`` header (Sendbird's "Share an encrypted file" docs; the Platform API's
``require_auth`` of "Send a message"). The token is the application's master key, so it goes only to
the file's own host, never across a redirect to another one (as browsers drop credentials there).

The body is read as a stream and cut at ``max_bytes`` (a stated ``Content-Length`` above it is refused
before reading any); its type is read from its first bytes and an unread type is refused at once.
The outcome is typed: ``Fetched``, or ``Refused`` with a reason the turn turns into a short answer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import httpx

from ..protocol.file_types import SNIFF_BYTES, FileType, detect
from .file_hosts import allowed

MAX_REDIRECTS = 3
"""Redirects followed for one file (each to a listed host); a fourth is a failed fetch."""
CHUNK_BYTES = 64 * 1024
"""How much of the body is read at a time: a too-big file is cut within one chunk past the limit."""
TIMEOUT = httpx.Timeout(10.0, read=15.0)
"""Per request: connecting, and waiting for each piece of the body."""
TOTAL_S = 60.0
"""The most one file takes, redirects included: a server that trickles bytes is cut off."""

RefusalReason = Literal["too_big", "off_host", "unreachable", "unsupported_type"]


@dataclass(frozen=True)
class Fetched:
    """A file's bytes and its type, as read from those bytes."""

    data: bytes
    file_type: FileType

    @property
    def media_type(self) -> str:
        """The media type its bytes show (``image/jpeg``…), whatever the message said."""
        return self.file_type.media_type


@dataclass(frozen=True)
class Refused:
    """A file not taken, and why: ``too_big``, ``off_host``, ``unreachable`` or ``unsupported_type``."""

    reason: RefusalReason
    detail: str
    """For the logs (status, host, sizes); never a URL's query, which may carry a key."""
    read: int = 0
    """Body bytes read before refusing."""


FetchResult = Fetched | Refused


def _where(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.host}{url.path}"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


async def _read(response: httpx.Response, max_bytes: int) -> FetchResult:
    """The body, cut at ``max_bytes``; refused as soon as its first bytes show an unread type."""
    stated = response.headers.get("content-length", "")
    if stated.isdigit() and int(stated) > max_bytes:
        return Refused("too_big", f"Content-Length {stated} > {max_bytes}")
    body = bytearray()
    file_type: FileType | None = None
    async for chunk in response.aiter_raw(CHUNK_BYTES):
        body += chunk
        if len(body) > max_bytes:
            return Refused("too_big", f"more than {max_bytes} bytes", read=len(body))
        if file_type is None and len(body) >= SNIFF_BYTES:
            file_type = detect(bytes(body))
            if file_type is None:
                return Refused("unsupported_type", "not a type the server reads", read=len(body))
    return typed(bytes(body), file_type)


def typed(data: bytes, file_type: FileType | None = None) -> FetchResult:
    """``data`` as a file of the type its bytes show (``file_type`` when already read from them), or
    refused as a type the server does not read."""
    file_type = file_type or detect(data)
    if file_type is None:
        return Refused("unsupported_type", "not a type the server reads", read=len(data))
    return Fetched(data, file_type)


async def _follow(
    url: httpx.URL, hosts: list[str], max_bytes: int, api_token: str | None, client: httpx.AsyncClient
) -> FetchResult:
    token_origin = _origin(url)
    for _hop in range(MAX_REDIRECTS + 1):
        if not allowed(url, hosts):
            return Refused("off_host", f"{url.scheme}://{url.host} is not a listed file host")
        headers = {"Accept-Encoding": "identity"}
        if api_token and _origin(url) == token_origin:
            headers["Api-Token"] = api_token
        request = client.build_request("GET", url, headers=headers, timeout=TIMEOUT)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            if response.is_redirect:
                url = url.join(response.headers["location"])
                continue
            if response.status_code != 200:
                return Refused("unreachable", f"{response.status_code} from {_where(url)}")
            return await _read(response, max_bytes)
        finally:
            await response.aclose()
    return Refused("unreachable", f"more than {MAX_REDIRECTS} redirects")


async def fetch(
    url: str,
    *,
    hosts: list[str],
    max_bytes: int,
    api_token: str | None,
    client: httpx.AsyncClient,
    total_s: float = TOTAL_S,
) -> FetchResult:
    """The file at ``url``, or why it was not taken; ``api_token`` is sent only to the URL's own host.

    Pass the token for a file Sendbird keeps (its host on ``hosts``); nothing is fetched off ``hosts``.
    """
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return Refused("off_host", "not a URL")
    try:
        async with asyncio.timeout(total_s):
            return await _follow(parsed, hosts, max_bytes, api_token, client)
    except (httpx.HTTPError, httpx.InvalidURL, TimeoutError) as exc:
        return Refused("unreachable", f"{type(exc).__name__} fetching {_where(parsed)}")
