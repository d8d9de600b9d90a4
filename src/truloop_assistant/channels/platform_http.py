"""A small JSON-over-HTTP client on aiohttp, for the Sendbird Platform API (see ``platform_client``).

aiohttp spends about a fifth of the CPU httpx does per request, and a turn makes several of them.
A :class:`PlatformClient` sends to one base URL with the same headers on every request, reads the
whole answer into a :class:`Reply`, and raises :class:`PlatformTransportError` when there is no
answer. Paths are sent as written: percent-escapes in them (``%2F`` in a channel URL) stay as they
are. Like httpx it follows no redirects, and takes its proxy from ``HTTPS_PROXY``/``HTTP_PROXY``
(and ``NO_PROXY``) and its trusted CAs from certifi (or ``SSL_CERT_FILE``).
"""

from __future__ import annotations

import json
import os
import ssl
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
import certifi
from yarl import URL

from ..errors import ServiceError
from .pacing import Kind, Pacer, Throttled
from .rate_headers import asked_wait, learns_from, limit_of

KEEPALIVE_S = 5.0
"""How long an idle connection is kept for the next request (httpx's default)."""


class PlatformTransportError(ServiceError):
    """No answer: the connection failed or was dropped, the request timed out, or the client is closed.

    Its text starts with the name of the underlying error (``ClientConnectorError: ...``).
    """


class PlatformThrottled(PlatformTransportError):
    """Not sent: the app-wide budget had no slot for it (a typing call with none to spare)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer, read whole."""

    status_code: int
    headers: Mapping[str, str]
    """Case-insensitive (aiohttp's ``CIMultiDictProxy``)."""
    content: bytes
    reason: str = ""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` if it is not JSON."""
        return json.loads(self.content)


def retry_after(reply: Reply) -> float | None:
    """The wait a 429 (or 503) asks for, in seconds (``rate_headers.asked_wait``)."""
    return asked_wait(reply.headers)


def _encode_json(body: Any) -> bytes:
    """JSON as httpx sends it: compact, UTF-8, non-ASCII characters as they are."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class PlatformClient:
    """One pooled ``aiohttp.ClientSession``, opened at the first request (inside the running loop)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str],
        timeout_s: float,
        connect_timeout_s: float = 5.0,
        max_connections: int = 100,
        pacer: Pacer | None = None,
    ) -> None:
        self.pacer = pacer
        """Paces every request app-wide (see ``pacing``); None: requests go out at once."""
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self._connect_timeout_s = connect_timeout_s
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=connect_timeout_s)
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._proxy: str | None = None
        self._closed = False

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        timeout: float | None = None,
        kind: Kind = Kind.ANSWER,
        channel: str = "",
        stream: str = "",
    ) -> Reply:
        """Send ``method`` to the base URL + ``path`` (already escaped), with ``json`` as the body, in
        its slot of the method's app-wide budget (``kind``; ``channel``: a message send's channel;
        ``stream``: the growing message's id, see ``pacing``)."""
        session = self._open()
        asked = time.monotonic()
        if self.pacer is not None:
            try:
                asked = await self.pacer.acquire(method, kind, channel=channel, stream=stream)
            except Throttled as exc:
                raise PlatformThrottled(f"Throttled: {exc}") from exc
        try:
            async with session.request(
                method,
                URL(self.base_url + path, encoded=True),
                data=None if json is None else _encode_json(json),
                params=params,
                timeout=self._timeout if timeout is None else self._timeout_of(timeout),
                allow_redirects=False,
                proxy=self._proxy,
            ) as response:
                content = await response.read()
                reply = Reply(response.status, response.headers, content, response.reason or "")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise PlatformTransportError(f"{type(exc).__name__}: {exc}") from exc
        if self.pacer is not None:
            self.pacer.answered(method, time.monotonic() - asked)
            await self._heed(method, path, reply)
        return reply

    async def _heed(self, method: str, path: str, reply: Reply) -> None:
        """What the answer says of the budget: a 429 holds the method back for every process, not only
        this caller; a stated plan limit (``X-RateLimit-Limit``) becomes the method's budget."""
        assert self.pacer is not None
        if reply.status_code == 429:
            await self.pacer.hold(method, retry_after(reply) or 1.0)
        if learns_from(method, path) and (limit := limit_of(reply.headers.get("X-RateLimit-Limit"))):
            await self.pacer.learn(method, limit)

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise PlatformTransportError("ClientClosed: the client has been closed")
        if self._session is None:
            # aiohttp's own trust_env would read the environment (and ~/.netrc) in a thread on
            # every request: the proxy is looked up once, here.
            self._proxy = _env_proxy(URL(self.base_url))
            tls: ssl.SSLContext | bool = True
            if self.base_url.startswith("https:"):
                tls = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=self._timeout,
                connector=aiohttp.TCPConnector(
                    limit=self._max_connections, keepalive_timeout=KEEPALIVE_S, ssl=tls
                ),
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    def _timeout_of(self, seconds: float) -> aiohttp.ClientTimeout:
        if (timeout := self._timeouts.get(seconds)) is None:
            connect = min(seconds, self._connect_timeout_s)
            timeout = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds, connect=connect)
        return timeout

    async def aclose(self) -> None:
        """Close the connections; later requests raise :class:`PlatformTransportError`."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> PlatformClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _env_proxy(url: URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``HTTP_PROXY``), unless ``NO_PROXY``
    exempts its host."""
    if url.host is None or urllib.request.proxy_bypass(url.host):
        return None
    return urllib.request.getproxies_environment().get(url.scheme)
