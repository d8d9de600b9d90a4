"""Faults injected into a running server: Redis restarts, Sendbird outages, a failing model provider."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.fakes.llm import FakeLLM
from tests.support import JWT_SECRET, calendar_model, make_settings, serve, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.local.embedded_redis import RedisServer, free_port


async def test_redis_restarted_mid_turn_keeps_the_pending_call_and_the_turn_completes(sendbird: Any) -> None:
    with RedisServer(appendonly=True, extra_args=["--appendfsync", "always"]) as redis_server:
        settings = make_settings(redis_server.url, sendbird.url)
        port = free_port()
        app = create_app(settings, embedded_worker=True, model=calendar_model("your week is free"))
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            body = json.dumps(webhook_payload("calendar", message_id=77)).encode()
            r = await http.post(
                "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
            )
            assert r.json() == {"status": "queued"}
            [rpc_message] = await sendbird.wait_count(1)

            await asyncio.to_thread(redis_server.restart)  # the pending call must survive (AOF)

            token = issue_token(JWT_SECRET, "jeff")
            answer = {"jsonrpc": "2.0", "id": rpc_message.rpc["id"], "result": {"events": []}}
            for _ in range(20):  # the first request after the restart may meet a dropped connection
                r = await http.post(
                    "/api/v1/agent/tool-message", json=answer, headers={"authorization": f"Bearer {token}"}
                )
                if r.status_code != 503:
                    break
                assert r.json()["error"]["code"] == "unavailable"  # never a 500
                await asyncio.sleep(0.25)
            # Resuming, or (if a retry follows a try that got through) a duplicate that makes sure of it.
            assert r.status_code in (200, 202) and r.json()["status"] in ("resuming", "duplicate")
            messages = await sendbird.wait_count(2, timeout=30)
            assert messages[-1].text == "your week is free"


async def test_a_sendbird_outage_longer_than_the_send_retries_still_delivers_one_answer(
    start_server: Any,
) -> None:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("hello through the outage")])

    async with start_server(model=FunctionModel(fn)) as h:
        h.sendbird.failures = [(503, {})] * 7  # more than one send's 5 attempts
        await h.user_says("hi")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == "hello through the outage"
        await h.idle()
        assert len(h.sendbird.messages) == 1


def openai_model(port: int) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", api_key="fake")
    return OpenAIChatModel("fake-model", provider=provider)


async def test_a_failing_model_provider_ends_the_turn_with_an_apology(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake provider only
    llm, port = FakeLLM(statuses=[500] * 10), free_port()
    async with serve(llm.app(), port), start_server(model=openai_model(port)) as h:
        await h.user_says("안녕")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == "서버 오류가 발생했습니다. 잠시 후 다시 시도해 주세요."
        # The next message works again once the provider does.
        llm.statuses.clear()
        await h.user_says("hello again")
        replies = await h.replies(2, timeout=30)
        assert replies[1].text == "answer to: hello again"


async def test_a_model_provider_that_hangs_times_out_with_a_clear_answer(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake provider only
    llm, port = FakeLLM(hold=10), free_port()
    async with serve(llm.app(), port), start_server(model=openai_model(port), turn_timeout_s=1.5) as h:
        await h.user_says("hello?")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == "The request timed out. Please try again in a moment."
