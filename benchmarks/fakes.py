"""The fake model provider in a process of its own, so that its CPU is counted in no one's figures.

It is ``tests.fakes.llm.FakeLLM`` (an OpenAI-compatible ``POST /v1/chat/completions``) with a think
time per request drawn uniformly from ``think-ms × (1 ± jitter)``, and a log of every request:
``GET /log`` answers ``[[turn key, think seconds], …]`` (``?since=N`` from the N-th request on),
the turn key being the text of the request's last user message. A benchmark gives every turn a
distinct text, so it can subtract the model's own time from each turn's latency. The model asks
the phone for this week's calendar first (``get_calendar_events``), then answers
``answer to: <the user's text>`` once it has the result.

    .venv/bin/python -m benchmarks.fakes --llm-port P [--think-ms 1500] [--jitter 0.5]

Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.llm import FakeLLM
from tests.support import CALENDAR_ARGS


def calendar_first(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Ask the phone for the calendar; once its result is there, the default answer (``None``)."""
    if messages[-1]["role"] == "tool":
        return None
    call = {"id": "call_cal", "type": "function",
            "function": {"name": "get_calendar_events", "arguments": json.dumps(CALENDAR_ARGS)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def turn_key(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message: what names the turn a request belongs to."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


@dataclass
class TimedLLM(FakeLLM):
    """FakeLLM whose think time is logged per request (its own ``delay_s`` stays 0)."""

    think_s: float = 0.0
    jitter: float = 0.5
    log: list[tuple[str, float]] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._complete, methods=["POST"]),
                Route("/log", self._log, methods=["GET"]),
            ]
        )

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()  # Starlette keeps it: FakeLLM reads it again
        think = self.think_s * random.uniform(1 - self.jitter, 1 + self.jitter)
        if think > 0:
            await asyncio.sleep(think)
        self.log.append((turn_key(body["messages"]), think))
        response = await super()._complete(request)
        self.requests[-1] = {}  # the count names the completions; the bodies are not needed
        response.headers["x-think-ms"] = f"{think * 1000:.3f}"
        return response

    async def _log(self, request: Request) -> Response:
        since = int(request.query_params.get("since", "0"))
        return JSONResponse(self.log[since:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-port", type=int, required=True)
    parser.add_argument("--think-ms", type=float, default=0.0, help="mean think time per model request")
    parser.add_argument("--jitter", type=float, default=0.5, help="think time varies by ± this fraction")
    args = parser.parse_args()
    llm = TimedLLM(script=calendar_first, think_s=args.think_ms / 1000, jitter=args.jitter)
    uvicorn.run(
        llm.app(),
        host="127.0.0.1",
        port=args.llm_port,
        log_level="warning",
        access_log=False,
        loop="uvloop",
        http="httptools",
    )


if __name__ == "__main__":
    main()
