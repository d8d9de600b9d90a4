"""Streamed answers beside whole ones: Platform API calls and CPU time per turn.

The server (API and an embedded worker), the fake Sendbird and a model that writes its answer a
sentence at a time run in this process, on a throwaway Redis; the same turns run once with
``TRULOOP_STREAM=true`` and once with ``false``. Calls are counted by kind as Sendbird would count them
against the plan's limits; CPU is this process's (the fakes' share is the same in both runs, so the
difference is what streaming costs).

    .venv/bin/python -m benchmarks.streaming [--turns 10] [--sentences 20] [--pause-ms 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from benchmarks.harness import redis_under_test
from tests.fakes.sendbird import FakeSendbird
from tests.support import make_settings, serve, served, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.local.embedded_redis import free_port

FINISHED = '{"streaming":false}'
KINDS = ("send", "update", "deletion", "typing", "lookup", "creation")


def writer(sentences: int, pause_s: float) -> tuple[FunctionModel, str]:
    """A model writing ``sentences`` sentences ``pause_s`` apart, and the answer it writes."""
    pieces = [f"Sentence {i} is about the week ahead. " for i in range(1, sentences + 1)]
    answer = "".join(pieces).rstrip()

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(pause_s * (sentences - 1))  # as long as writing it takes
        return ModelResponse(parts=[TextPart(answer)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i, piece in enumerate(pieces):
            if i:
                await asyncio.sleep(pause_s)
            yield piece if i < len(pieces) - 1 else piece.rstrip()

    return FunctionModel(whole, stream_function=stream), answer


async def measure(stream: bool, args: argparse.Namespace) -> dict[str, Any]:
    """Run the turns one after another; calls per turn by kind, CPU ms per turn, seconds until the
    first text showed and per turn."""
    model, answer = writer(args.sentences, args.pause_ms / 1000)
    async with redis_under_test("standalone") as redis, served(FakeSendbird()) as sendbird:
        settings = make_settings(redis.url, sendbird.url, stream=stream, queue_name="bench-stream")
        app = create_app(settings, embedded_worker=True, model=model)
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            first_s: list[float] = []

            async def turn(i: int) -> None:
                sent = time.monotonic()
                channel = f"{'stream' if stream else 'whole'}-{i}"
                body = webhook_payload(f"the week {i}", user="jeff", channel=channel, message_id=10_000 + i)
                raw = json.dumps(body).encode()
                r = await http.post(
                    "/api/v1/webhooks/sendbird", content=raw, headers={"x-sendbird-signature": sign(raw)}
                )
                r.raise_for_status()

                def done(_: Any) -> bool:
                    return any(
                        m.get("message") == answer and m.get("data", FINISHED) == FINISHED
                        for m in sendbird.shown_in(channel)
                    )

                await sendbird.wait_for(done, timeout=60)
                first_s.append(sendbird.in_channel(channel)[0].at - sent)

            await turn(-1)  # warm-up: imports, connections, the worker's first job
            await asyncio.sleep(0.5)
            sendbird.calls.clear()
            first_s.clear()
            cpu, started = time.process_time(), time.monotonic()
            for i in range(args.turns):
                await turn(i)
            await asyncio.sleep(0.5)  # the last typing stop
            cpu_ms = (time.process_time() - cpu) * 1000 / args.turns
            seconds = (time.monotonic() - started) / args.turns
    calls = {kind: sendbird.calls.get(kind, 0) / args.turns for kind in KINDS}
    first = sum(first_s) / len(first_s)
    return {
        "calls": calls,
        "total": sum(calls.values()),
        "cpu_ms": cpu_ms,
        "seconds": seconds,
        "first_s": first,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=20, help="sentences per answer")
    parser.add_argument("--pause-ms", type=float, default=100.0, help="the model's pause between sentences")
    args = parser.parse_args()
    for stream in (False, True):
        figures = asyncio.run(measure(stream, args))
        calls = ", ".join(f"{kind} {n:.2f}" for kind, n in figures["calls"].items() if n)
        print(
            f"{'streamed' if stream else 'whole   '}: {figures['total']:.2f} Platform API calls per turn"
            f" ({calls}); CPU {figures['cpu_ms']:.1f} ms per turn;"
            f" first text after {figures['first_s']:.2f} s, {figures['seconds']:.2f} s per turn"
        )


if __name__ == "__main__":
    main()
