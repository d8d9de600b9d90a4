"""HTTP/1.1 to WSGI and back for :mod:`.side_port`: a request head read whole becomes a WSGI environ,
the app's answer becomes the bytes to send, one request per connection (``Connection: close``).

Only what the side ports' apps need: the request line and header fields (no body: their paths take
none), ``HEAD`` answered without a body. This module imports only the standard library
and the package's errors.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote

from ..errors import TruloopError

WsgiApp = Callable[..., Iterable[bytes]]
"""A WSGI application."""

log = logging.getLogger(__name__)

_REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}


class SidePortRefused(TruloopError):
    """A request answered with an error of its own, before the app sees it."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def answer(self) -> bytes:
        """The error answer, in the API's shape ``{"error":{"code":…,"message":…}}``."""
        return error_answer(self.status, self.code, self.message)


def error_answer(status: int, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": code, "message": message}}, separators=(",", ":")).encode()
    return answer_bytes(f"{status} {_REASONS[status]}", [("Content-Type", "application/json")], body)


def environ(head: bytes, *, server: tuple[str, int], peer: Any) -> dict[str, Any]:
    """The WSGI environ of a request head (without its final blank line); :class:`SidePortRefused` (400)
    when its request line or a header line is malformed."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        raise SidePortRefused(400, "bad_request", "the request line is not METHOD PATH HTTP/1.x")
    method, target, version = parts
    path, _, query = target.partition("?")
    values: dict[str, Any] = {
        "REQUEST_METHOD": method.upper(),
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote(path, "latin-1"),
        "QUERY_STRING": query,
        "SERVER_NAME": server[0] or "0.0.0.0",
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": version,
        "REMOTE_ADDR": str(peer[0]) if isinstance(peer, tuple) and peer else "",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise SidePortRefused(400, "bad_request", "a header line is not NAME: VALUE")
        key = name.upper().replace("-", "_")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = "HTTP_" + key
        value = value.strip()
        values[key] = f"{values[key]},{value}" if key in values else value
    return values


def call(app: WsgiApp, environ: dict[str, Any]) -> bytes:
    """The app's whole answer as the bytes to send; a 500 in the API's shape if the app fails."""
    started: list[Any] = []

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[..., None]:
        started[:] = [status, headers]
        return lambda data: None

    try:
        result = app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            if (close := getattr(result, "close", None)) is not None:
                close()
        status, headers = started
    except Exception:
        log.exception("%s %s failed", environ["REQUEST_METHOD"], environ["PATH_INFO"])
        return error_answer(500, "internal_error", "the answer could not be made")
    if environ["REQUEST_METHOD"] == "HEAD":
        return answer_bytes(status, headers, b"", length=_length(headers, body))
    return answer_bytes(status, headers, body)


def answer_bytes(
    status: str, headers: list[tuple[str, str]], body: bytes, *, length: str | None = None
) -> bytes:
    """Status line, the headers (``Content-Length`` set, ``Connection: close``), blank line, body."""
    kept = [(k, v) for k, v in headers if k.lower() not in ("connection", "content-length")]
    kept += [("Content-Length", length if length is not None else str(len(body))), ("Connection", "close")]
    head = "\r\n".join([f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in kept), "", ""])
    return head.encode("latin-1") + body


def _length(headers: list[tuple[str, str]], body: bytes) -> str:
    """What a GET's ``Content-Length`` would be, for the answer to a HEAD."""
    return next((v for k, v in headers if k.lower() == "content-length"), str(len(body)))
