"""A local stand-in for the Sendbird Platform API: records sent messages, fails on request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


@dataclass
class SentMessage:
    channel_url: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def is_rpc(self) -> bool:
        return self.body.get("custom_type") == "agent-rpc"

    @property
    def rpc(self) -> dict[str, Any]:
        """The JSON-RPC request carried in ``data`` (a JSON string, as Sendbird stores it)."""
        assert isinstance(self.body["data"], str)
        return json.loads(self.body["data"])

    @property
    def text(self) -> str:
        return self.body["message"]


@dataclass
class FakeSendbird:
    messages: list[SentMessage] = field(default_factory=list)
    requests: int = 0
    failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    """Statuses (and headers) to answer the next sends with, before succeeding."""
    _seen_dedup: set[str] = field(default_factory=set)
    _changed: asyncio.Condition | None = None

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/v3/group_channels/{channel_url:path}/messages", self._send, methods=["POST"])]
        )

    async def _send(self, request: Request) -> JSONResponse:
        self.requests += 1
        if self.failures:
            status, headers = self.failures.pop(0)
            return JSONResponse(
                {"error": True, "code": 500910, "message": "fail"}, status_code=status, headers=headers
            )
        body = await request.json()
        if request.headers.get("api-token") is None:
            return JSONResponse({"error": True, "code": 400401, "message": "no token"}, status_code=401)
        dedup = body.get("dedup_id")
        if dedup is None or dedup not in self._seen_dedup:
            if dedup is not None:
                self._seen_dedup.add(dedup)
            channel_url = unquote(request.path_params["channel_url"])
            self.messages.append(SentMessage(channel_url, body, dict(request.headers)))
            await self._notify()
        return JSONResponse({"message_id": len(self.messages), **body})

    async def _notify(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def wait_for(
        self, predicate: Callable[[list[SentMessage]], bool], *, timeout: float = 10.0
    ) -> list[SentMessage]:
        """Wait until the recorded messages satisfy ``predicate``; fail with what was seen."""
        cond = self._condition()
        try:
            async with asyncio.timeout(timeout):
                async with cond:
                    await cond.wait_for(lambda: predicate(self.messages))
        except TimeoutError:
            seen = [(m.channel_url, m.body.get("custom_type"), m.text) for m in self.messages]
            raise AssertionError(f"timed out waiting for messages; got {seen}") from None
        return self.messages

    async def wait_count(
        self, n: int, channel_url: str | None = None, *, timeout: float = 10.0
    ) -> list[SentMessage]:
        def enough(msgs: list[SentMessage]) -> bool:
            return len(self.in_channel(channel_url)) >= n

        await self.wait_for(enough, timeout=timeout)
        return self.in_channel(channel_url)

    def in_channel(self, channel_url: str | None) -> list[SentMessage]:
        return [m for m in self.messages if channel_url is None or m.channel_url == channel_url]
