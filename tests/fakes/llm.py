"""A local stand-in for an OpenAI-compatible Chat Completions server (the LLM provider)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class FakeLLM:
    requests: list[dict[str, Any]] = field(default_factory=list)
    hold: int = 0
    """How many of the next requests hang (a slow or dying provider)."""
    statuses: list[int] = field(default_factory=list)
    """HTTP statuses to answer the next requests with, before answering normally."""
    delay_s: float = 0.0
    """Mean think time of an answer (a real model takes a while)."""
    request_seen: asyncio.Event = field(default_factory=asyncio.Event)
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once a request is being held."""
    script: Callable[[list[dict[str, Any]]], dict[str, Any] | None] | None = None
    """Given the request's messages, the assistant message to answer with (None: the default answer)."""
    hold_when: Callable[[list[dict[str, Any]]], bool] | None = None
    """Requests to hang (once each time it says so), e.g. the one that follows a tool's result."""

    gather: int = 0
    """Requests wait until this many are being answered together (up to ``gather_timeout_s``)."""
    gather_timeout_s: float = 30.0
    gathered: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once ``gather`` requests were in flight at the same moment."""
    _gave_up: bool = False

    piece_delay_s: float = 0.0
    """A streamed answer's text comes a word at a time, this long apart (0: all at once)."""
    streaming: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once a streamed answer has begun to come out."""

    in_flight: int = 0
    """Requests being answered right now."""
    most_in_flight: int = 0
    """The most requests ever answered at once (how many turns waited on the model together)."""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])

    async def _complete(self, request: Request) -> Response:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self.gather and self.in_flight >= self.gather:
            self.gathered.set()
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.request_seen.set()
        if self.gather and not self._gave_up:
            # Past the timeout this and every later request go on: ``gathered`` stays unset.
            try:
                await asyncio.wait_for(self.gathered.wait(), self.gather_timeout_s)
            except TimeoutError:
                self._gave_up = True
        if self.hold > 0 or (self.hold_when is not None and self.hold_when(body["messages"])):
            self.hold = max(0, self.hold - 1)
            self.holding.set()
            await asyncio.sleep(3600)
        if self.delay_s:
            # Real models vary: somewhere between half and one and a half times the mean.
            await asyncio.sleep(self.delay_s * random.uniform(0.5, 1.5))
        if self.statuses:
            status = self.statuses.pop(0)
            return JSONResponse(
                {"error": {"message": "fake failure", "type": "server_error"}}, status_code=status
            )
        user_texts = [m["content"] for m in body["messages"] if m["role"] == "user"]
        message = self.script(body["messages"]) if self.script is not None else None
        if message is None:
            message = {"role": "assistant", "content": f"answer to: {user_texts[-1] if user_texts else ''}"}
        if body.get("stream"):
            return StreamingResponse(self._chunks(body, message), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def _chunks(self, body: dict[str, Any], message: dict[str, Any]) -> AsyncIterator[bytes]:
        """The answer as Chat Completions streams it (server-sent events), its text a word at a time."""
        head = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return f"data: {json.dumps({**head, 'choices': [choice]})}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        for piece in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
            self.streaming.set()
            yield chunk({"content": piece})
            if self.piece_delay_s:
                await asyncio.sleep(self.piece_delay_s)
        for index, call in enumerate(message.get("tool_calls") or []):
            yield chunk({"tool_calls": [{"index": index, **call}]})
        yield chunk({}, "tool_calls" if message.get("tool_calls") else "stop")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        yield f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n".encode()
        yield b"data: [DONE]\n\n"
