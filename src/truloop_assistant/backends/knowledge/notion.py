"""The Notion API as ``kb sync-notion`` reads it: search, pages, blocks, within Notion's rate limit.

Every request carries ``Authorization: Bearer <token>`` and ``Notion-Version: 2022-06-28`` and first
waits its turn in a token bucket (Notion allows about three requests a second on average, with short
bursts). A 429 holds every request for its ``Retry-After`` seconds (at most a minute each time, and
ten minutes in all for one client, so a sync cannot be held back for ever); a 5xx, a timeout or a lost
connection is tried again after 1, 2 and 4 s. What trying again cannot fix is a :class:`NotionError`
whose message says what to do::

    NotionError         Notion's answer (status and code), or no answer after the retries
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from ...config import reveal
from ...errors import ServiceError

NOTION_VERSION = "2022-06-28"
DEFAULT_API_URL = "https://api.notion.com"
INTEGRATIONS_URL = "https://www.notion.so/my-integrations"
REQUESTS_PER_S = 3.0
"""Notion's documented average rate limit per integration."""
BURST = 3
RETRIES = 3
"""Further tries after a 5xx, a timeout or a lost connection (after 1, 2 and 4 s)."""
BACKOFF_S = 1.0
RATE_LIMITED_MAX = 10
"""429s in a row for one request before the sync gives up."""
RETRY_AFTER_MAX_S = 60.0
"""The longest one 429's ``Retry-After`` is waited for (a longer one is tried again after this long)."""
RATE_LIMITED_TOTAL_S = 600.0
"""The most a client waits for 429s in all (one sync) before it gives up."""
TIMEOUT_S = 30.0
PAGE_SIZE = 100
"""Results per request of a list (Notion's maximum)."""


class NotionError(ServiceError):
    """Notion refused a request, or did not answer; the message says what to fix."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class RateLimiter:
    """A token bucket: ``burst`` requests at once, ``rate`` a second on average; a 429 holds everyone."""

    def __init__(
        self,
        rate: float | None = None,
        burst: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # Read when built, not when defined, so a test may speed every sync up.
        self.rate = rate or REQUESTS_PER_S
        self.burst = burst or BURST
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        """Return when one more request may go."""
        async with self._lock:  # waiters go in turn, so none is starved
            while True:
                now = self._clock()
                self._refill(now)
                delay = max(self._stamp - now, (1 - self._tokens) / self.rate)
                if delay <= 0:
                    break
                await asyncio.sleep(delay)
            self._tokens -= 1

    def hold(self, seconds: float) -> None:
        """No request goes for ``seconds`` (Notion's ``Retry-After``); then one goes at once."""
        now = self._clock()
        self._refill(now)
        self._stamp = max(self._stamp, now + seconds)
        self._tokens = 1.0

    def _refill(self, now: float) -> None:
        if now > self._stamp:
            self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now


class NotionClient:
    """Reads what an integration may read; ``requests`` counts what it asked (retries included)."""

    def __init__(
        self,
        token: str | SecretStr,
        api_url: str = DEFAULT_API_URL,
        *,
        limiter: RateLimiter | None = None,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.limiter = limiter or RateLimiter()
        self.requests = 0
        self.held_s = 0.0
        """How long 429s have held this client's requests, in all."""
        # Read when built, not when defined, so a test may shorten them.
        self._hold_max_s, self._held_max_s = RETRY_AFTER_MAX_S, RATE_LIMITED_TOTAL_S
        self._retries = retries
        self._backoff_s = backoff_s
        self._http = httpx.AsyncClient(
            base_url=self.api_url,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            headers={
                "Authorization": f"Bearer {reveal(token)}",
                "Notion-Version": NOTION_VERSION,
                "Accept": "application/json",
            },
        )

    async def __aenter__(self) -> NotionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def search_pages(self) -> AsyncIterator[dict[str, Any]]:
        """Every page the integration can read (``POST /v1/search``, all of its result pages)."""
        body: dict[str, Any] = {"filter": {"property": "object", "value": "page"}, "page_size": PAGE_SIZE}
        async for page in self._list("POST", "/v1/search", body=body):
            yield page

    async def page(self, page_id: str) -> dict[str, Any]:
        """A page: its properties (title), ``url``, ``last_edited_time``, ``archived``, ``parent``."""
        return await self.request("GET", f"/v1/pages/{quote(page_id)}")

    async def block(self, block_id: str) -> dict[str, Any]:
        """One block (what a page inside a toggle or a column names as its parent)."""
        return await self.request("GET", f"/v1/blocks/{quote(block_id)}")

    async def database(self, database_id: str) -> dict[str, Any]:
        """A database: its ``title`` and ``parent`` (what a database row names as its parent)."""
        return await self.request("GET", f"/v1/databases/{quote(database_id)}")

    async def children(self, block_id: str) -> list[dict[str, Any]]:
        """The blocks directly inside a page or a block, all of them (their own children not read)."""
        path = f"/v1/blocks/{quote(block_id)}/children"
        return [block async for block in self._list("GET", path, params={"page_size": PAGE_SIZE})]

    async def me(self) -> dict[str, Any]:
        """The integration's bot user: what a token check asks for."""
        return await self.request("GET", "/v1/users/me")

    async def _list(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """The results of a paginated list, following ``next_cursor`` while ``has_more``."""
        cursor: str | None = None
        while True:
            if cursor is None:
                answer = await self.request(method, path, body=body, params=params)
            elif method == "GET":
                answer = await self.request(method, path, params={**(params or {}), "start_cursor": cursor})
            else:
                answer = await self.request(method, path, body={**(body or {}), "start_cursor": cursor})
            for result in answer.get("results") or []:
                if isinstance(result, dict):
                    yield result
            cursor = answer.get("next_cursor")
            if not answer.get("has_more") or not isinstance(cursor, str):
                return

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One call, waited for, retried as the module says; its JSON object."""
        failures = rate_limited = 0
        while True:
            await self.limiter.wait()
            self.requests += 1
            try:
                response = await self._http.request(method, path, json=body, params=params)
            except httpx.TransportError as exc:  # timeouts, refused and dropped connections
                failures += 1
                if failures > self._retries:
                    raise NotionError(
                        f"no answer from Notion at {self.api_url} for {method} {path} after {failures} tries "
                        f"({type(exc).__name__}: {exc}); check the network (and TRULOOP_NOTION_API_URL) "
                        "and run the sync again"
                    ) from None
                await asyncio.sleep(self._backoff_s * 2 ** (failures - 1))
                continue
            if response.status_code == 429:
                rate_limited += 1
                if rate_limited > RATE_LIMITED_MAX:
                    raise NotionError(
                        f"Notion kept answering 429 (rate limited) to {method} {path}; "
                        "another integration may share its limit: run the sync again later",
                        status=429,
                        code="rate_limited",
                    )
                hold = min(_retry_after(response), self._hold_max_s)
                if self.held_s + hold > self._held_max_s:
                    raise NotionError(
                        f"Notion has held this sync back for more than {self._held_max_s:g} s in all "
                        f"(429 rate limited, last to {method} {path}); another integration may share its "
                        "limit: run the sync again later",
                        status=429,
                        code="rate_limited",
                    )
                self.held_s += hold
                self.limiter.hold(hold)
                continue
            if response.status_code >= 500:
                failures += 1
                if failures > self._retries:
                    raise _error(response, method, path)
                await asyncio.sleep(self._backoff_s * 2 ** (failures - 1))
                continue
            if response.status_code >= 400:
                raise _error(response, method, path)
            try:
                answer = response.json()
            except ValueError:
                answer = None
            if not isinstance(answer, dict):
                raise NotionError(
                    f"{self.api_url}{path} did not answer with a JSON object: is TRULOOP_NOTION_API_URL "
                    "Notion's API (https://api.notion.com)?",
                    status=response.status_code,
                )
            return answer


def _retry_after(response: httpx.Response) -> float:
    """Notion's ``Retry-After`` in seconds (1 when it sent none that can be read)."""
    try:
        return max(0.0, float(response.headers.get("retry-after", "1")))
    except ValueError:
        return 1.0


def _error(response: httpx.Response, method: str, path: str) -> NotionError:
    """Notion's refusal, saying what to fix where the status says it."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    code = str(body.get("code") or response.reason_phrase or "error")
    said = f"{status} {code}: {body.get('message') or 'no details'}"
    if status == 401:
        fix = (
            f"set TRULOOP_NOTION_TOKEN to the integration's secret ({INTEGRATIONS_URL} > the integration > "
            "Internal Integration Secret)"
        )
        return NotionError(f"Notion refused the token ({said}); {fix}", status=status, code=code)
    if status == 403:
        fix = f"give the integration the 'Read content' capability at {INTEGRATIONS_URL}"
        return NotionError(f"Notion refused {method} {path} ({said}); {fix}", status=status, code=code)
    if status == 404:
        fix = "share the page with the integration (the page's ••• menu > Connections)"
        return NotionError(
            f"Notion has nothing at {path} for this integration ({said}); {fix}", status=status, code=code
        )
    if status >= 500:
        return NotionError(
            f"Notion answered {method} {path} with {said} several times; run the sync again later",
            status=status,
            code=code,
        )
    return NotionError(f"Notion refused {method} {path} ({said})", status=status, code=code)
