"""Model providers that fail or dawdle, seen through the running server: fallbacks, limits, slow calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from starlette.requests import Request
from starlette.responses import JSONResponse

from tests.api.test_ledger import ledger
from tests.api.test_metrics import delta, scrape
from tests.api.test_tools_gate import relaying
from tests.commands.test_inspect import inspect
from tests.fakes.llm import FakeLLM
from tests.support import CALENDAR_ARGS, served
from truloop_assistant.agent.models import falls_back

RATE_LIMITED_KO = "요청 한도를 초과했습니다. 잠시 후 다시 시도해 주세요."
RATE_LIMITED_EN = "The assistant is over its request limit right now. Please try again in a moment."
SERVER_ERROR_EN = "Something went wrong on our side. Please try again in a moment."


def backup_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": "the backup model answered"}


@asynccontextmanager
async def providers(
    monkeypatch: pytest.MonkeyPatch, primary: FakeLLM, backup: FakeLLM, *, fallbacks: bool = True
) -> AsyncIterator[tuple[FakeLLM, FakeLLM]]:
    """Two local OpenAI-compatible providers, configured as an operator would: by environment."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fakes only
    async with served(primary) as first, served(backup) as second:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{first.url}/v1")  # type: ignore[attr-defined]
        monkeypatch.setenv("OPENAI_API_KEY", "fake")
        monkeypatch.setenv("VLLM_BASE_URL", f"{second.url}/v1")  # type: ignore[attr-defined]
        monkeypatch.setenv("TRULOOP_MODEL", "openai-chat:primary-model")
        if fallbacks:
            monkeypatch.setenv("TRULOOP_FALLBACK_MODELS", "vllm:backup-model")
        yield first, second


async def test_a_primary_provider_answering_500_falls_back_to_the_next_model(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, backup = FakeLLM(statuses=[500] * 20), FakeLLM(script=backup_answer)
    async with providers(monkeypatch, primary, backup), start_server() as h:
        await h.user_says("hello")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == "the backup model answered"
        assert primary.requests  # the primary was asked first


async def test_a_rate_limited_primary_provider_falls_back_to_the_next_model(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, backup = FakeLLM(statuses=[429] * 20), FakeLLM(script=backup_answer)
    async with providers(monkeypatch, primary, backup), start_server() as h:
        await h.user_says("안녕")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == "the backup model answered"


async def test_a_request_the_provider_rejects_does_not_fall_back(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, backup = FakeLLM(statuses=[400] * 20), FakeLLM(script=backup_answer)
    async with providers(monkeypatch, primary, backup), start_server() as h:
        await h.user_says("hello")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == SERVER_ERROR_EN
        assert backup.requests == []


async def test_a_rate_limited_provider_tells_the_user_to_try_again_in_a_moment(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, unused = FakeLLM(statuses=[429] * 20), FakeLLM()
    async with providers(monkeypatch, primary, unused, fallbacks=False), start_server() as h:
        await h.user_says("안녕")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == RATE_LIMITED_KO


async def test_when_every_model_is_rate_limited_the_user_is_told_so(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, backup = FakeLLM(statuses=[429] * 20), FakeLLM(statuses=[429] * 20)
    async with providers(monkeypatch, primary, backup), start_server() as h:
        await h.user_says("hello")
        [reply] = await h.replies(1, timeout=30)
        assert reply.text == RATE_LIMITED_EN
        assert primary.requests and backup.requests


@dataclass
class SlowFor(FakeLLM):
    """Takes ``slow_s`` over prompts that contain ``word`` (a long generation), answers others at once."""

    word: str = "essay"
    slow_s: float = 2.0

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        if any(self.word in str(m.get("content")) for m in body["messages"] if m["role"] == "user"):
            self.request_seen.set()
            await asyncio.sleep(self.slow_s)
        return await super()._complete(request)


async def test_a_slow_model_call_does_not_hold_up_other_conversations(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = SlowFor()  # behind a fallback chain, as in production
    async with providers(monkeypatch, llm, FakeLLM()), start_server() as h:
        await h.user_says("write me an essay", channel="ch-slow")
        await asyncio.wait_for(llm.request_seen.wait(), timeout=10)  # its model call is under way
        await h.user_says("hi", channel="ch-fast")
        [fast] = await h.replies(1, channel="ch-fast", timeout=10)
        assert fast.text == "answer to: hi"
        assert h.sendbird.in_channel("ch-slow") == []  # still thinking about the essay
        [slow] = await h.replies(1, channel="ch-slow", timeout=10)
        assert slow.text == "answer to: write me an essay"


def down(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(503, "primary", body={"error": "overloaded"})


async def down_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    raise ModelHTTPError(503, "primary", body={"error": "overloaded"})
    yield ""  # an async generator that fails before its first piece


def said(text: str) -> FunctionModel:
    """A model that says ``text``, whole or streamed."""

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield text

    return FunctionModel(whole, stream_function=stream, model_name="backup")


def chain(primary: FunctionModel, backup: FunctionModel) -> FallbackModel:
    """The primary, then the backup, falling back as the server's chain does (``TRULOOP_FALLBACK_MODELS``)."""
    return FallbackModel(primary, backup, fallback_on=falls_back)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_ledger_and_the_metrics_say_when_a_fallback_answered(
    start_server: Any, stream: bool
) -> None:
    primary = FunctionModel(down, stream_function=down_stream, model_name="primary")
    async with start_server(model=chain(primary, said("the backup model answered")), stream=stream) as h:
        before = await scrape(h)
        await h.user_says("hello")
        await h.idle()
        assert h.sendbird.shown_in("ch-1")[-1]["message"] == "the backup model answered"
        [turn] = (await ledger(h)).json()["turns"]
        after = await scrape(h)

    assert (turn["model"], turn["fallback_requests"], turn["model_requests"]) == ("function:backup", 1, 1)
    answered = "truloop_model_requests_total"
    assert delta(after, before, answered, model="function:backup", role="fallback") == 1
    assert delta(after, before, answered, model="function:primary", role="primary") == 0


async def test_a_turn_over_two_steps_counts_each_request_by_the_model_that_answered(
    start_server: Any,
) -> None:
    """The primary asks the phone; by the resume it is down, and the backup answers."""
    asked: list[str] = []

    def primary_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if asked:
            return down(messages, info)
        asked.append("calendar")
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    primary = FunctionModel(primary_fn, model_name="primary")
    async with start_server(model=chain(primary, said("nothing this week"))) as h:
        before = await scrape(h)
        await h.user_says("이번 주 일정 알려줘")
        [rpc] = await h.rpc_requests(1)
        [paused] = (await ledger(h)).json()["turns"]
        await h.answer(rpc["id"], result={"events": []})
        [reply] = await h.replies(1)
        await h.idle()
        [turn] = (await ledger(h)).json()["turns"]
        after = await scrape(h)

    assert (paused["model"], paused["fallback_requests"]) == ("function:primary", 0)
    assert reply.text == "nothing this week"
    assert (turn["model"], turn["fallback_requests"], turn["model_requests"]) == ("function:backup", 1, 2)
    answered = "truloop_model_requests_total"
    assert delta(after, before, answered, model="function:primary", role="primary") == 1
    assert delta(after, before, answered, model="function:backup", role="fallback") == 1


async def test_the_relay_writers_requests_count_in_its_turn_by_the_model_that_answered(
    start_server: Any, directory: Any
) -> None:
    """The relay writer runs inside the turn's tool call: the primary cannot write, the backup does."""
    turn_fn = relaying(lambda: "Mina, lunch is at 1pm now.").function

    def primary_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if "send_message_to_user" not in {t.name for t in info.function_tools}:  # the writer
            return down(messages, info)
        return turn_fn(messages, info)

    primary = FunctionModel(primary_fn, model_name="primary")
    async with start_server(model=chain(primary, FunctionModel(turn_fn, model_name="backup"))) as h:
        await h.user_says("tell mina lunch moved to 1pm")
        [rpc] = await h.rpc_requests(1)
        assert "Mina, lunch is at 1pm now." in rpc["params"]["message"]  # as the backup wrote it
        await h.answer(rpc["id"], result={"confirmed": True})
        await h.replies(1)
        await h.idle()
        [turn] = (await ledger(h)).json()["turns"]

    # The request, the writer's (by the backup), the answer after the yes.
    assert (turn["model_requests"], turn["fallback_requests"], turn["model"]) == (3, 1, "function:primary")


async def test_configured_models_are_named_as_the_settings_name_them(
    start_server: Any, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    primary, backup = FakeLLM(), FakeLLM(script=backup_answer)
    async with providers(monkeypatch, primary, backup), start_server() as h:
        before = await scrape(h)
        await h.user_says("hello", channel="ch-up")
        await h.replies(1, channel="ch-up")
        primary.statuses = [503] * 20  # then the primary provider goes down
        await h.user_says("hello again", channel="ch-down")
        [reply] = await h.replies(1, channel="ch-down")
        await h.idle()
        [up] = (await ledger(h, "ch-up")).json()["turns"]
        [gone] = (await ledger(h, "ch-down")).json()["turns"]
        after = await scrape(h)
    inspected = inspect(redis_url, "ch-down")

    assert reply.text == "the backup model answered"
    assert (up["model"], up["fallback_requests"]) == ("openai-chat:primary-model", 0)
    assert (gone["model"], gone["fallback_requests"]) == ("vllm:backup-model", 1)
    answered = "truloop_model_requests_total"
    assert delta(after, before, answered, model="openai-chat:primary-model", role="primary") == 1
    assert delta(after, before, answered, model="vllm:backup-model", role="fallback") == 1
    assert "1 model requests (1 by a fallback), last by vllm:backup-model" in inspected
