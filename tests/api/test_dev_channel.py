"""The dev server's local channel refuses and explains messages as the Sendbird webhook does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, Harness

CHANNEL = "demo"


class Counting:
    """A model that answers "ok" and counts the turns it ran."""

    def __init__(self) -> None:
        self.runs = 0
        self.model = FunctionModel(self.answer)

    def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.runs += 1
        return ModelResponse(parts=[TextPart("ok")])


async def post(
    h: Harness, message: str, *, user: str = "jeff", channel: str = CHANNEL, **extra: Any
) -> dict[str, Any]:
    r = await h.http.post(
        f"/dev/api/channels/{channel}/messages", json={"user_id": user, "message": message, **extra}
    )
    assert r.status_code == 202, r.text
    return r.json()


async def channel_messages(h: Harness, channel: str = CHANNEL) -> list[dict[str, Any]]:
    r = await h.http.get(f"/dev/api/channels/{channel}/messages")
    return r.json()["messages"]


async def bot_says(h: Harness, ready: Callable[[list[str]], bool]) -> list[str]:
    """What the assistant has written in the channel, once ``ready`` holds for it."""
    for _ in range(200):
        said = [m["message"] for m in await channel_messages(h) if m["user_id"] == BOT]
        if ready(said):
            return said
        await asyncio.sleep(0.05)
    raise AssertionError(f"the assistant said {said}")


async def test_over_the_rate_limit_messages_are_not_run_and_the_user_is_told_once(start_server: Any) -> None:
    model = Counting()
    async with start_server(model=model.model, channel="local", rate_limit_user="3/minute") as h:
        statuses = [(await post(h, f"message {i}"))["status"] for i in range(6)]
        assert statuses == ["queued"] * 3 + ["rate_limited"] * 3
        said = await bot_says(h, lambda said: said.count("ok") == 3 and len(said) == 4)
        await h.idle()
        assert said == await bot_says(h, lambda _: True)  # nothing more came
        [notice] = [s for s in said if s != "ok"]
        assert notice == "You're sending messages too fast (rate limit reached). Please try again in 60 s."
        assert model.runs == 3
        # Another user has their own budget.
        assert (await post(h, "hello", user="mina", channel="mina-dm"))["status"] == "queued"


async def test_a_message_over_the_limit_is_shown_explained_and_not_run(start_server: Any) -> None:
    model = Counting()
    async with start_server(model=model.model, channel="local") as h:
        long = "가" * 4500
        assert (await post(h, long))["status"] == "too_long"
        [notice] = await bot_says(h, lambda said: len(said) == 1)
        assert notice == "메시지가 너무 길어요 (4500자). 4000자 이내로 나눠서 보내 주세요."
        await h.idle()
        assert [m["message"] for m in await channel_messages(h)] == [long, notice]
        assert model.runs == 0


async def test_a_retried_post_is_shown_and_answered_once(start_server: Any) -> None:
    model = Counting()
    async with start_server(model=model.model, channel="local") as h:
        first = await post(h, "이번 주 일정 알려줘", dedup_id="m-1")
        again = await post(h, "이번 주 일정 알려줘", dedup_id="m-1")
        assert first["status"] == "queued" and again == {"status": "duplicate", "message_id": None}
        await bot_says(h, lambda said: said == ["ok"])
        await h.idle()
        texts = [m["message"] for m in await channel_messages(h)]
        assert texts == ["이번 주 일정 알려줘", "ok"] and model.runs == 1
        # Another id is another message; without one, every post is new.
        assert (await post(h, "이번 주 일정 알려줘", dedup_id="m-2"))["status"] == "queued"
        assert (await post(h, "hi"))["status"] == (await post(h, "hi"))["status"] == "queued"


async def test_a_group_channel_answers_mentions_and_keeps_the_rest_as_context(start_server: Any) -> None:
    seen: list[str] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(str(messages[-1]))
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    async with start_server(model=FunctionModel(answer), channel="local") as h:
        # Alone with the assistant, every message is a turn.
        assert (await post(h, "hi", channel="team"))["status"] == "queued"
        await h.idle()
        # With a second person, only a mention is.
        assert (await post(h, "lunch at noon?", user="mina", channel="team"))["status"] == "not_addressed"
        assert (await post(h, "sure", channel="team"))["status"] == "not_addressed"
        asked = await post(h, f"@{BOT} what did mina ask?", user="mina", channel="team")
        by_field = await post(h, "and me?", channel="team", mentioned_user_ids=[BOT])
        assert asked["status"] == by_field["status"] == "queued"
        await h.idle()
        assert len(seen) == 3
        # The turn saw what the two said to each other, and who said it.
        assert "mina: lunch at noon?" in seen[1] and "jeff: sure" in seen[1]
        texts = [m["message"] for m in await channel_messages(h, "team") if m["user_id"] == BOT]
        assert texts == ["answer 1", "answer 2", "answer 3"]
