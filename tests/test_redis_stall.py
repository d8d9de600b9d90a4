"""A Redis that stops answering: the endpoints fail fast with 503, and re-sent requests go through after."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.sendbird import FakeSendbird
from tests.support import JWT_SECRET, make_settings, serve, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.local.embedded_redis import RedisServer, free_port

# The contract says "about 2 s"; Sendbird re-sends a webhook it has waited 5 s for.
FAST_ENOUGH_S = 2.5

CALENDAR = {
    "notification_message": "…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-24T00:00:00+09:00",
}


def model() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts
        if any(isinstance(p, ToolReturnPart) for p in last):
            return ModelResponse(parts=[TextPart("your week is free")])
        if "calendar" in str(getattr(last[-1], "content", "")):
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR)])
        return ModelResponse(parts=[TextPart("hello after the stall")])

    return FunctionModel(fn)


@pytest.fixture
async def server() -> AsyncIterator[RedisServer]:
    with RedisServer() as redis_server:
        yield redis_server


@pytest.fixture
async def http(server: RedisServer, sendbird: FakeSendbird) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(make_settings(server.url, sendbird.url), embedded_worker=True, model=model())
    port = free_port()
    async with (
        serve(app, port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
    ):
        yield client


async def post_webhook(http: httpx.AsyncClient, payload: dict[str, Any]) -> httpx.Response:
    body = json.dumps(payload).encode()
    return await http.post(
        "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
    )


async def post_answer(http: httpx.AsyncClient, call_id: str) -> httpx.Response:
    answer = {"jsonrpc": "2.0", "id": call_id, "result": {"events": []}}
    token = issue_token(JWT_SECRET, "jeff")
    return await http.post(
        "/api/v1/agent/tool-message", json=answer, headers={"authorization": f"Bearer {token}"}
    )


async def timed(request: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await request
    return response, time.monotonic() - started


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable"
    assert response.headers["retry-after"].isdigit()


async def test_a_stalled_redis_gets_a_fast_503_and_the_resent_requests_are_answered(
    server: RedisServer, http: httpx.AsyncClient, sendbird: FakeSendbird
) -> None:
    r = await post_webhook(http, webhook_payload("calendar", channel="ch-call", message_id=1))
    assert r.json() == {"status": "queued"}
    [rpc_message] = await sendbird.wait_count(1, "ch-call")
    call_id = rpc_message.rpc["id"]
    hello = webhook_payload("hello", channel="ch-hello", message_id=2)

    server.pause()
    try:
        (webhook, webhook_s), (answer, answer_s), (ready, ready_s) = await asyncio.gather(
            timed(post_webhook(http, hello)), timed(post_answer(http, call_id)), timed(http.get("/readyz"))
        )
    finally:
        server.resume()

    assert webhook_s < FAST_ENOUGH_S, f"the webhook took {webhook_s:.1f} s"
    assert_unavailable(webhook)
    assert answer_s < FAST_ENOUGH_S, f"the tool message took {answer_s:.1f} s"
    assert_unavailable(answer)
    assert ready_s < FAST_ENOUGH_S and ready.status_code == 503, f"{ready.status_code} in {ready_s:.1f} s"

    # Sendbird re-sends the webhook and the device retries its answer: both are taken as new.
    r = await post_webhook(http, hello)
    assert r.status_code == 200 and r.json() == {"status": "queued"}
    [reply] = await sendbird.wait_count(1, "ch-hello")
    assert reply.text == "hello after the stall"

    r = await post_answer(http, call_id)
    assert r.status_code == 202 and r.json() == {"status": "resuming"}
    messages = await sendbird.wait_count(2, "ch-call")
    assert messages[-1].text == "your week is free"
    assert (await http.get("/readyz")).status_code == 200
