"""A local stand-in for the hosts where Sendbird keeps the files people send.

What it copies from Sendbird, and where Sendbird says so:
- A file kept with ``require_auth`` (and every file of an application with file encryption on) is
  served only with a key: Sendbird's "Share an encrypted file" page (Chat SDK v4) says such files are
  "decrypted and accessed securely only by the users in the channel", an SDK adding ``?auth=…``; the
  Platform API's ``require_auth`` ("Send a message"; ``SendAMessageRequest.md`` of
  sendbird-platform-sdk-python) says the key is needed "to access encrypted files"; Sendbird's
  community answer "Where to retrieve Encryption Key of user" shows a server downloading such a URL
  with its ``Api-Token`` header. Here a file put with ``needs_token`` answers 401 without the token,
  as the Platform API answers a request without a valid ``Api-Token`` (the file hosts' exact error
  is not documented).
- Thumbnails (``thumbnail_sizes`` of the SDKs' "Generate thumbnails of a file message") are plain
  files on the same hosts: put them as any other path.

- The ``FILE`` message's webhook (``tests.support.file_payload``) names the file in its ``payload`` as
  the chat SDKs' ``FileMessage`` names it: ``url``, ``name``, ``type`` (the sender's stated media
  type), ``size`` (bytes), ``require_auth`` and ``thumbnails`` (``SBDFileMessage.h``: "This class
  doesn't include a binary data for the file. It is just a URL."; the .NET SDK's ``FileMessage``:
  ``Url``, ``Name``, ``Size``, ``Type``; the Flutter SDK's ``requireAuth``, ``secureUrl``). The
  Platform API's message resource nests the same under ``file``, and its "Send a message" request
  names them ``file_name``/``file_size``/``file_type`` (sendbird-platform-sdk-python's
  ``SendAMessageRequest.md``): the server reads all three shapes, and a multiple-files message's
  ``files`` list (the SDKs' ``MultipleFilesMessage``).

What is plain HTTP rather than Sendbird: redirects (``redirect``; a CDN in front of a file host),
a ``Content-Length`` that is wrong or missing (``content_length``), and a host that is slow
(``delay_s`` before each piece of the body).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

FILES_TOKEN = "sendbird-master-token"
PIECE = 64 * 1024


@dataclass
class ServedFile:
    data: bytes
    content_type: str = "application/octet-stream"
    needs_token: bool = False
    content_length: int | Literal["omit"] | None = None
    """``None``: the true length; ``"omit"``: none (chunked); a number: that, true or not."""
    delay_s: float = 0.0
    """Waited before each 64 KiB piece of the body."""


@dataclass
class FakeFiles:
    api_token: str = FILES_TOKEN
    files: dict[str, ServedFile] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    """(path, headers) of every request, in order."""
    url: str = ""

    def put(self, path: str, data: bytes, **how: object) -> str:
        """Serve ``data`` at ``path`` (options as ``ServedFile``'s); its full URL."""
        self.files[path] = ServedFile(data, **how)  # type: ignore[arg-type]
        return self.url + path

    def redirect(self, path: str, to: str) -> str:
        """Answer ``path`` with a 302 to ``to`` (a full URL); its full URL."""
        self.redirects[path] = to
        return self.url + path

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._get, methods=["GET"])])

    async def _get(self, request: Request) -> Response:
        path = request.url.path
        self.requests.append((path, dict(request.headers)))
        if path in self.redirects:
            return RedirectResponse(self.redirects[path], status_code=302)
        served = self.files.get(path)
        if served is None:
            return JSONResponse({"error": True, "code": 400201, "message": "Not found."}, status_code=404)
        if served.needs_token and request.headers.get("api-token") != self.api_token:
            return JSONResponse(
                {"error": True, "code": 400401, "message": 'Invalid value: "Api-Token".'}, status_code=401
            )
        headers = {"content-type": served.content_type}
        if served.content_length is None:
            headers["content-length"] = str(len(served.data))
        elif served.content_length != "omit":
            headers["content-length"] = str(served.content_length)
        return StreamingResponse(self._pieces(served), headers=headers)

    @staticmethod
    async def _pieces(served: ServedFile) -> AsyncIterator[bytes]:
        for start in range(0, len(served.data), PIECE):
            if served.delay_s:
                await asyncio.sleep(served.delay_s)
            yield served.data[start : start + PIECE]
