"""The dev server answers only requests addressed to loopback or to the address it was told to bind.

A web page on another site can make a browser send requests to ``127.0.0.1`` under a name of its own
that resolves there (DNS rebinding); the browser then sends that name as ``Host``. Requests whose
``Host`` is not ``localhost``, ``127.0.0.1``, ``[::1]`` (any port) or the ``--host`` the dev server
binds are answered 400 ``invalid_host`` in the usual error shape, before any route sees them.
"""

from __future__ import annotations

import ipaddress
import json

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether a ``--host`` to bind is this machine's alone (``localhost``, ``127.0.0.0/8``, ``::1``);
    ``""`` and ``0.0.0.0`` are every address, so not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a name: whatever it resolves to, it may be more than this machine


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port or an IPv6 address's brackets, lowercased."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[1:end] if end > 0 else ""
    if header.count(":") == 1:
        return header.partition(":")[0]
    return header


class DevHosts:
    """ASGI middleware: 400 ``invalid_host`` unless ``Host`` names loopback or ``bind_host``."""

    def __init__(self, app: ASGIApp, *, bind_host: str) -> None:
        self.app = app
        self.allowed = LOOPBACK_NAMES | {host_name(bind_host)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("host", "")
        if host_name(given) in self.allowed:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        names = ["localhost", "127.0.0.1", "[::1]", *sorted(self.allowed - LOOPBACK_NAMES)]
        message = f"Host {given!r}: the dev server answers requests to {', '.join(names)} only"
        body = json.dumps({"error": {"code": "invalid_host", "message": message}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
            }
        )
        await send({"type": "http.response.body", "body": body})
