"""The dev server's local channel refuses and explains messages as the Sendbird webhook does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, CALENDAR_ARGS, Harness, calendar_model

CHANNEL = "demo"


class Counting:
    """A model that answers "ok", counts the turns it ran and keeps the words each was given."""

    def __init__(self) -> None:
        self.runs = 0
        self.prompts: list[str] = []
        self.model = FunctionModel(self.answer)

    def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.runs += 1
        self.prompts += [str(p.content) for p in messages[-1].parts if isinstance(p, UserPromptPart)]
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
        await h.idle()
        said = await bot_says(h, lambda said: "ok" in said and len(said) == said.count("ok") + 1)
        [notice] = [s for s in said if s != "ok"]
        assert notice == "You're sending messages too fast (rate limit reached). Please try again in 60 s."
        # The three queued ones ran (those waiting together as one turn), the others not at all.
        assert said.count("ok") == model.runs and 1 <= model.runs <= 3
        assert "\n".join(model.prompts).split("\n") == [f"message {i}" for i in range(3)]
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
        assert '{"by": "user", "user_id": "mina", "text": "lunch at noon?"}' in seen[1]
        assert '{"by": "user", "user_id": "jeff", "text": "sure"}' in seen[1]
        texts = [m["message"] for m in await channel_messages(h, "team") if m["user_id"] == BOT]
        assert texts == ["answer 1", "answer 2", "answer 3"]


REQUESTS = ("agent-rpc", "agent-rpc-settled")
"""A request's message, open or (updated in place once its call settled) closed."""


async def rpc_messages(h: Harness, n: int, channel: str = CHANNEL) -> list[dict[str, Any]]:
    """The channel's agent-rpc messages (open or settled) once there are ``n``."""
    for _ in range(200):
        found = [m for m in await channel_messages(h, channel) if m["custom_type"] in REQUESTS]
        if len(found) >= n:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {n} agent-rpc messages in {channel}")


async def call_states(h: Harness, *call_ids: str) -> dict[str, Any]:
    r = await h.http.get("/dev/api/calls", params=[("id", call_id) for call_id in call_ids])
    assert r.status_code == 200, r.text
    return r.json()["calls"]


async def test_requests_to_the_phone_carry_their_state_so_a_reloaded_page_offers_only_open_ones(
    start_server: Any,
) -> None:
    async with start_server(model=calendar_model("two events"), channel="local") as h:
        await post(h, "이번 주 일정 알려줘")
        [asked] = await rpc_messages(h, 1)
        first = json.loads(asked["data"])["id"]
        assert asked["call"] == {"state": "pending", "user_id": "jeff"}
        assert (await h.answer(first, result={"events": []})).status_code == 202
        await bot_says(h, lambda said: "two events" in said)

        await post(h, "again")
        second = json.loads((await rpc_messages(h, 2))[1]["data"])["id"]
        await post(h, "never mind")  # the second request is left unanswered: superseded
        await h.idle()
        requests = [m for m in await channel_messages(h) if m["custom_type"] in REQUESTS]
        assert [m["call"]["state"] for m in requests] == ["answered", "superseded"]
        # Each request's message was updated in place to say what became of it.
        assert [(m["custom_type"], json.loads(m["data"])) for m in requests] == [
            ("agent-rpc-settled", {"id": first, "state": "answered", "method": "calendar.getEvents"}),
            ("agent-rpc-settled", {"id": second, "state": "superseded", "method": "calendar.getEvents"}),
        ]
        assert requests[0]["message_id"] == asked["message_id"]
        # A script can list (and wait for) one kind of message: plain text is custom_type "".
        url = f"/dev/api/channels/{CHANNEL}/messages"
        settled = (await h.http.get(url, params={"custom_type": "agent-rpc-settled"})).json()["messages"]
        assert [m["message_id"] for m in settled] == [m["message_id"] for m in requests]
        texts = (await h.http.get(url, params={"custom_type": ""})).json()["messages"]
        assert [m["message"] for m in texts] == [
            "이번 주 일정 알려줘",
            "two events",
            "again",
            "never mind",
            "two events",
        ]
        # Only the messages after ``after`` are read, and only request messages get a state.
        plain = await h.http.get(f"/dev/api/channels/{CHANNEL}/messages", params={"after": 0})
        assert all("call" not in m for m in plain.json()["messages"] if m["custom_type"] not in REQUESTS)

        # The page asks for the requests it shows; an id the server never issued is null.
        assert await call_states(h, first, second, "call_unknown") == {
            first: {"state": "answered", "user_id": "jeff"},
            second: {"state": "superseded", "user_id": "jeff"},
            "call_unknown": None,
        }
        assert (await h.http.get("/dev/api/calls")).status_code == 400  # at least one id
        too_many = [("id", f"call_{i}") for i in range(101)]
        assert (await h.http.get("/dev/api/calls", params=too_many)).status_code == 400


async def test_the_page_knows_the_directory_s_people_and_their_time_zones(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=Counting().model, channel="local", timezone="Europe/Paris") as h:
        users = (await h.http.get("/dev/api/users")).json()["users"]
        by_id = {u["user_id"]: u for u in users}
        assert by_id["jeff"] == {
            "user_id": "jeff",
            "name": "Jeff Kim",
            "title": "Engineering Manager",
            "timezone": "Asia/Seoul",
        }
        assert by_id["sarah"]["timezone"] == "America/Los_Angeles"
        assert [u["user_id"] for u in users] == sorted(by_id) and "kim" not in by_id
        assert (await h.http.get("/dev/api/users/sarah")).json()["timezone"] == "America/Los_Angeles"
        guest = await h.http.get("/dev/api/users/kim")
        assert guest.status_code == 404 and guest.json()["error"]["code"] == "unknown_user"
        # Without a zone of their own, people get the server's: the page builds their calendar there.
        info = (await h.http.get("/dev/api/info")).json()
        assert info["timezone"] == "Europe/Paris" and info["bot_user_id"] == BOT


async def test_the_page_and_its_script_and_styles_are_served(start_server: Any) -> None:
    async with start_server(model=Counting().model, channel="local") as h:
        page = await h.http.get("/dev")
        assert page.status_code == 200 and '<meta name="viewport"' in page.text
        for path, kind in (("/dev/dev.js", "text/javascript"), ("/dev/dev.css", "text/css")):
            r = await h.http.get(path)
            assert r.status_code == 200 and r.headers["content-type"].startswith(kind) and r.text
            assert path in page.text


async def test_the_dev_token_carries_the_configured_audience_and_issuer(start_server: Any) -> None:
    async with start_server(
        model=Counting().model, channel="local", jwt_audience="app", jwt_issuer="me"
    ) as h:
        token = (await h.http.post("/dev/api/token", json={"user_id": "jeff"})).json()["token"]
        r = await h.http.get("/api/v1/agent/calls", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == 200 and r.json() == {"calls": []}


async def test_the_dev_pages_token_is_accepted_under_a_short_token_lifetime(start_server: Any) -> None:
    async with start_server(channel="local", jwt_max_ttl_s=3600) as h:
        token = (await h.http.post("/dev/api/token", json={"user_id": "jeff"})).json()["token"]
        r = await h.http.get("/api/v1/agent/calls", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == 200, r.text


def calendar_when_asked(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Ask the phone for the calendar when the message is about it; then (or else) answer briefly."""
    if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
        return ModelResponse(parts=[TextPart("two events")])
    prompt = next(p.content for p in reversed(messages[-1].parts) if p.part_kind == "user-prompt")
    if "calendar" in str(prompt):
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
    return ModelResponse(parts=[TextPart("hello")])


async def test_in_a_group_the_page_shows_a_request_in_the_persons_own_channel(start_server: Any) -> None:
    async with start_server(model=FunctionModel(calendar_when_asked), channel="local") as h:
        await post(h, "hi", user="mina", channel="team")
        await post(h, f"@{BOT} what's on my calendar this week?", channel="team")
        direct = f"relay-{BOT}-jeff"
        [asked] = await rpc_messages(h, 1, channel=direct)
        assert asked["call"] == {"state": "pending", "user_id": "jeff"}
        assert (await h.answer(json.loads(asked["data"])["id"], result={"events": []})).status_code == 202
        await h.idle()
        team = await channel_messages(h, "team")
        assert [m["message"] for m in team if m["user_id"] == BOT] == [
            "hello",
            "jeff, I've sent a request for your phone to our private chat.",
            "two events",
        ]
        assert not any(m["custom_type"] in REQUESTS or m["data"] for m in team)
        [settled] = await rpc_messages(h, 1, channel=direct)
        assert settled["custom_type"] == "agent-rpc-settled"
