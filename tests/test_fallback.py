"""Model providers that fail or dawdle, seen through the running server: fallbacks, limits, slow calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import models
from starlette.requests import Request
from starlette.responses import JSONResponse

from tests.fakes.llm import FakeLLM
from tests.support import served

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
