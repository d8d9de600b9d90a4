"""What a device sees of its requests: the open ones on request, and each request's message updated
in place once its call settled, on every device of the user."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS, JWT_SECRET, ON_STANDALONE_AND_CLUSTER, Harness, calendar_model
from truloop_assistant.auth import issue_token


def bearer(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}"}


async def open_calls(h: Harness, user: str = "jeff") -> list[dict[str, Any]]:
    r = await h.http.get("/api/v1/agent/calls", headers=bearer(user))
    assert r.status_code == 200, r.text
    assert int(r.headers["X-RateLimit-Remaining"]) >= 0
    return r.json()["calls"]


async def call_state(h: Harness, call_id: str, user: str = "jeff") -> httpx.Response:
    return await h.http.get(f"/api/v1/agent/calls/{call_id}", headers=bearer(user))


@ON_STANDALONE_AND_CLUSTER
async def test_an_app_that_starts_again_lists_what_still_waits_for_it(start_server: Any) -> None:
    async with start_server(model=calendar_model()) as h:
        before = time.time()
        await h.user_says("calendar", channel="ch-1")
        [first] = await h.rpc_requests(1, "ch-1")
        await h.user_says("calendar", channel="ch-2")
        [second] = await h.rpc_requests(1, "ch-2")
        await h.user_says("calendar", user="mina", channel="ch-3")
        await h.rpc_requests(1, "ch-3")

        # Newest first, only the caller's, with what the agent-rpc message asked.
        calls = await open_calls(h)
        assert [c["id"] for c in calls] == [second["id"], first["id"]]
        assert calls[1] == {
            "id": first["id"],
            "method": "calendar.getEvents",
            "params": first["params"],
            "message": next(m.text for m in h.sendbird.messages if m.is_rpc),
            "channel_url": "ch-1",
            "state": "pending",
            "created_at": calls[1]["created_at"],
            "expires_at": calls[1]["expires_at"],
        }
        created = datetime.fromisoformat(calls[1]["created_at"])
        expires = datetime.fromisoformat(calls[1]["expires_at"])
        assert created.utcoffset() is not None and created.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert before - 1 <= created.timestamp() <= time.time()
        assert expires.timestamp() - created.timestamp() == h.settings.pending_call_ttl_s

        # Answered on one device, it is no longer open on any.
        assert (await h.answer(first["id"], result={"events": []})).status_code == 202
        assert [c["id"] for c in await open_calls(h)] == [second["id"]]
        answered = (await call_state(h, first["id"])).json()
        assert answered["state"] == "answered" and answered["params"] == first["params"]
        assert datetime.fromisoformat(answered["settled_at"]) >= created
        pending = (await call_state(h, second["id"])).json()
        assert pending["state"] == "pending" and "settled_at" not in pending

        # Someone else's call, a made-up one, no token.
        mine = await call_state(h, second["id"], user="mina")
        assert mine.status_code == 403 and mine.json()["error"]["code"] == "not_your_call"
        unknown = await call_state(h, "call_" + "0" * 32)
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_call"
        assert (await h.http.get("/api/v1/agent/calls")).status_code == 401
        assert [c["channel_url"] for c in await open_calls(h, "mina")] == ["ch-3"]


async def test_calls_settled_by_a_new_message_or_by_time_say_so(start_server: Any) -> None:
    async with start_server(model=calendar_model(), pending_call_ttl_s=1) as h:
        await h.user_says("calendar")
        [expiring] = await h.rpc_requests(1)
        await h.replies(1, timeout=15)  # the device did not answer in time: the turn went on
        gone = (await call_state(h, expiring["id"])).json()
        assert gone["state"] == "expired" and "settled_at" in gone
        assert await open_calls(h) == []
        late = await h.answer(expiring["id"], result={"events": []})
        assert late.status_code == 410 and late.json()["error"]["code"] == "call_expired"


def held_model(release: asyncio.Event) -> FunctionModel:
    """Asks for the calendar; the message "later" makes it wait for ``release`` before it answers."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts) and "later" not in str(
            messages[-1]
        ):
            return ModelResponse(parts=[TextPart("nothing this week")])
        if "later" in str(messages[-1]):
            await release.wait()
            return ModelResponse(parts=[TextPart("sure, later")])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    return FunctionModel(fn)


@ON_STANDALONE_AND_CLUSTER
async def test_each_request_message_is_updated_in_place_once_its_call_settles(start_server: Any) -> None:
    release = asyncio.Event()
    async with start_server(model=held_model(release)) as h:
        await h.user_says("이번 주 일정 알려줘")
        [asked] = await h.rpc_requests(1)
        assert (await h.answer(asked["id"], result={"events": []})).status_code == 202
        [update] = await h.sendbird.wait_updates(1, "ch-1")
        rpc_message = next(m for m in h.sendbird.messages if m.is_rpc)
        assert update.message_id == h.sendbird.messages.index(rpc_message) + 1
        assert update.body["custom_type"] == "agent-rpc-settled"
        assert update.settled == {"id": asked["id"], "state": "answered", "method": "calendar.getEvents"}
        assert update.body["message"] == "응답했어요."  # the user's language
        await h.replies(1)

        # Superseded: the update goes out while the run for the new message is still working.
        await h.user_says("what's on my calendar")
        second = (await h.rpc_requests(2))[-1]
        await h.user_says("later")
        updates = await h.sendbird.wait_updates(2, "ch-1")
        assert updates[-1].settled == {
            "id": second["id"],
            "state": "superseded",
            "method": "calendar.getEvents",
        }
        assert updates[-1].body["message"] == "Cancelled: you sent a new message."
        assert not release.is_set() and h.texts("ch-1")[-1] == "nothing this week"
        release.set()
        await h.replies(2)
        await h.idle()
        assert len(h.sendbird.updates) == 2  # once per call


async def test_an_update_sendbird_cannot_take_now_waits_without_holding_up_the_answer(
    start_server: Any,
) -> None:
    async with start_server(model=two_calendars()) as h:
        await h.user_says("both calendars")
        first, second = await h.rpc_requests(2)
        h.sendbird.update_failures.extend([503] * 1000)  # updates fail; sends still work
        assert (await h.answer(first["id"], result={"events": []})).json()["remaining"] == 1
        assert (await h.answer(second["id"], result={"events": []})).json() == {"status": "resuming"}
        [reply] = await h.replies(1)
        assert reply.text == "both answered" and h.sendbird.updates == []

        h.sendbird.update_failures.clear()  # Sendbird takes updates again: none was lost
        updates = await h.sendbird.wait_updates(2, "ch-1", timeout=15)
        assert sorted(u.settled["id"] for u in updates) == sorted([first["id"], second["id"]])
        assert {u.settled["state"] for u in updates} == {"answered"}


def two_calendars() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("both answered")])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS) for _ in range(2)])

    return FunctionModel(fn)


def says_what_came_back() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(" | ".join(f"{p.outcome}: {p.content}" for p in returns))])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    return FunctionModel(fn)


NOT_FOUND = {"code": -32601, "message": "Method not found", "data": {"method": "calendar.getEvents"}}
EVENTS = {
    "events": [
        {
            "id": "e1",
            "title": "Design review",
            "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
            "end": {"dateTime": "2026-11-24T11:00:00+09:00"},
        }
    ]
}


@ON_STANDALONE_AND_CLUSTER
async def test_a_device_without_the_method_does_not_settle_the_call_for_the_one_that_has_it(
    start_server: Any,
) -> None:
    async with start_server(model=says_what_came_back()) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        tablet = await h.answer(rpc["id"], error=NOT_FOUND)
        assert tablet.status_code == 202 and tablet.json() == {"status": "accepted", "remaining": 1}
        again = await h.answer(rpc["id"], error=NOT_FOUND)  # the tablet retries
        assert again.status_code == 200 and again.json() == {"status": "duplicate"}
        assert [c["id"] for c in await open_calls(h)] == [rpc["id"]]  # still open for the phone

        phone = await h.answer(rpc["id"], result=EVENTS)
        assert phone.status_code == 202 and phone.json() == {"status": "resuming"}
        [reply] = await h.replies(1)
        assert reply.text.startswith("success:") and "Design review" in reply.text
        assert "-32601" not in reply.text
        [update] = await h.sendbird.wait_updates(1, "ch-1")
        assert update.settled["state"] == "answered"


async def test_alone_a_method_not_found_ends_the_call_after_the_wait(start_server: Any) -> None:
    async with start_server(model=says_what_came_back(), unhandled_call_wait_s=1) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        started = time.monotonic()
        assert (await h.answer(rpc["id"], error=NOT_FOUND)).status_code == 202
        [reply] = await h.replies(1, timeout=15)
        assert 1 <= time.monotonic() - started < 10
        assert reply.text.startswith("failed: Method not found (-32601)")
        ended = (await call_state(h, rpc["id"])).json()
        assert ended["state"] == "cancelled"
        [update] = await h.sendbird.wait_updates(1, "ch-1")
        assert update.settled == {"id": rpc["id"], "state": "cancelled", "method": "calendar.getEvents"}
        # The device's retry of its answer is a duplicate; a real answer now is too late.
        assert (await h.answer(rpc["id"], error=NOT_FOUND)).json() == {"status": "duplicate"}
        late = await h.answer(rpc["id"], result=EVENTS)
        assert late.status_code == 410 and late.json()["error"]["code"] == "call_cancelled"


async def test_an_outage_during_the_resume_delays_the_update_and_the_answer_but_loses_neither(
    start_server: Any,
) -> None:
    async with start_server(model=calendar_model("nothing this week")) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        h.sendbird.outage(3)
        assert (await h.answer(rpc["id"], result={"events": []})).json() == {"status": "resuming"}
        [reply] = await h.replies(1, timeout=30)
        [update] = await h.sendbird.wait_updates(1, "ch-1", timeout=30)
        assert reply.text == "nothing this week" and update.settled["state"] == "answered"
        await h.idle()
        assert h.texts("ch-1") == ["nothing this week"] and len(h.sendbird.updates) == 1
