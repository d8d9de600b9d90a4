"""Time one full deferred turn through the server against the same cycle run bare in pydantic-ai.

Through the server: signed webhook -> queue -> worker -> agent -> pending call in Redis ->
agent-rpc message at a local fake Sendbird -> JSON-RPC response at /api/v1/agent/tool-message ->
resume -> answer at the fake Sendbird. Everything is real (Redis, HTTP, the queue) except the LLM,
a zero-latency FunctionModel, so the figures are the server's own overhead.

Bare: agent.run -> DeferredToolRequests -> JSON round trip -> agent.run(deferred_tool_results=...).

    .venv/bin/python -m benchmarks.deferred_turn [--turns 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from pydantic import TypeAdapter
from pydantic_ai import DeferredToolRequests, ModelMessagesTypeAdapter
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, serve, sign, webhook_payload
from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.config import load_settings
from truloop_assistant.embedded_redis import RedisServer, free_port
from truloop_assistant.tools.deps import AgentDeps

SEOUL = ZoneInfo("Asia/Seoul")

SECRET = "benchmark-secret-0123456789-abcdefghij"
EVENTS = {
    "events": [
        {
            "id": "e1",
            "title": "Standup",
            "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
            "end": {"dateTime": "2026-11-24T10:15:00+09:00"},
        }
    ]
}
_REQUESTS = TypeAdapter(DeferredToolRequests)


def model() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("You have a standup on Tuesday at 10:00.")])
        args = {
            "notification_message": "Reading your calendar",
            "start_date": "2026-11-23T00:00:00+09:00",
            "end_date": "2026-11-29T23:59:59+09:00",
        }
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", args)])

    return FunctionModel(fn)


async def bare_cycle(agent: Any) -> None:
    deps = AgentDeps(user_id="u", channel_url="c", timezone=SEOUL)
    first = await agent.run("calendar", deps=deps)
    requests = _REQUESTS.validate_json(_REQUESTS.dump_json(first.output))
    history = ModelMessagesTypeAdapter.validate_json(first.all_messages_json())
    results = requests.build_results(calls={requests.calls[0].tool_call_id: EVENTS})
    second = await agent.run(message_history=history, deferred_tool_results=results, deps=deps)
    assert isinstance(second.output, str)


async def server_cycle(http: httpx.AsyncClient, fake: FakeSendbird, token: str, i: int) -> float:
    channel = f"bench-{i}"
    body = json.dumps(webhook_payload("calendar", user="u", channel=channel, message_id=10_000 + i)).encode()
    start = time.perf_counter()
    r = await http.post(
        "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
    )
    assert r.json() == {"status": "queued"}, r.text
    [rpc_message] = await fake.wait_count(1, channel)
    call_id = rpc_message.rpc["id"]
    r = await http.post(
        "/api/v1/agent/tool-message",
        headers={"authorization": f"Bearer {token}"},
        json={"jsonrpc": "2.0", "id": call_id, "result": EVENTS},
    )
    assert r.status_code == 202, r.text
    await fake.wait_count(2, channel)
    return time.perf_counter() - start


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[int(len(ms) * 0.9) - 1]
    median = statistics.median(ms)
    return f"{name:<28} median {median:7.2f} ms   p90 {p90:7.2f} ms   min {ms[0]:7.2f} ms   (n={len(ms)})"


async def main(turns: int) -> None:
    agent = build_member_agent(model(), tool_timeout_s=10)
    for _ in range(5):
        await bare_cycle(agent)
    bare = []
    for _ in range(turns):
        t = time.perf_counter()
        await bare_cycle(agent)
        bare.append(time.perf_counter() - t)

    fake = FakeSendbird()
    with RedisServer() as redis_server:
        sb_port, api_port = free_port(), free_port()
        settings = load_settings(
            redis_url=redis_server.url,
            channel="sendbird",
            sendbird_app_id="bench",
            sendbird_api_token=API_TOKEN,
            sendbird_api_url=f"http://127.0.0.1:{sb_port}",
            jwt_secret=SECRET,
            rate_limit_user="100000/minute",  # this measures the turn, not the limiter's refusals
        )
        app = create_app(settings, embedded_worker=True, model=model())
        async with (
            serve(fake.app(), sb_port),
            serve(app, api_port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{api_port}") as http,
        ):
            token = issue_token(SECRET, "u")
            for i in range(5):
                await server_cycle(http, fake, token, -1 - i)
            server = [await server_cycle(http, fake, token, i) for i in range(turns)]

    print(summary("bare pydantic-ai cycle", bare))
    print(summary("through the server", server))
    server_ms, bare_ms = statistics.median(server) * 1000, statistics.median(bare) * 1000
    print(f"{'server / bare (medians)':<28} {server_ms / bare_ms:.1f}x")
    print(f"{'server overhead (medians)':<28} {server_ms - bare_ms:.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    asyncio.run(main(parser.parse_args().turns))
