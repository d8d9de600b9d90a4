"""Rate limits, input limits and expiry, attacked through HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, JWT_SECRET, ON_STANDALONE_AND_CLUSTER
from truloop_assistant.auth import issue_token
from truloop_assistant.store import keys

pytestmark = ON_STANDALONE_AND_CLUSTER

CALENDAR = {
    "notification_message": "…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-29T23:59:59+09:00",
}


def calendar_model(calls: int = 1) -> FunctionModel:
    """Asks the phone for the calendar (``calls`` times at once), then says what came back."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(" | ".join(f"{p.outcome}: {p.content}" for p in returns))])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR) for _ in range(calls)])

    return FunctionModel(fn)


def echo() -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")]))


async def test_tool_messages_over_the_limit_get_429_with_headers(start_server: Any) -> None:
    async with start_server(model=echo(), rate_limit_user="3/minute", rate_limit_admin="5/minute") as h:
        before = time.time()
        statuses = [(await h.answer(f"call_{i:032x}", result={})) for i in range(4)]
        assert [r.status_code for r in statuses] == [404, 404, 404, 429]
        assert [r.headers["X-RateLimit-Remaining"] for r in statuses] == ["2", "1", "0", "0"]
        limited = statuses[-1]
        assert limited.headers["X-RateLimit-Limit"] == "3"
        assert before + 50 <= int(limited.headers["X-RateLimit-Reset"]) <= time.time() + 61
        assert 1 <= int(limited.headers["Retry-After"]) <= 61
        assert limited.json()["error"]["code"] == "rate_limited"

        # Bad tokens and malformed bodies are refused before they could count (401, 400 first).
        assert (await h.post_tool_message(b"{}", token=None)).status_code == 401
        assert (
            await h.post_tool_message(b"garbage", token=issue_token(JWT_SECRET, "jeff"))
        ).status_code == 400
        # Another user has their own budget; an admin gets the admin limit.
        assert (await h.answer("call_" + "f" * 32, result={}, user="mina")).status_code == 404
        admin = issue_token(JWT_SECRET, "boss", role="admin")
        codes = [(await h.answer("call_" + "e" * 32, result={}, token=admin)).status_code for _ in range(6)]
        assert codes == [404] * 5 + [429]


async def test_every_device_endpoint_says_where_its_window_stands_on_success_and_error(
    start_server: Any,
) -> None:
    async with start_server(model=echo(), rate_limit_user="3/minute", rate_limit_admin="3/minute") as h:
        jeff = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}
        boss = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'boss', role='admin')}"}
        answered = [
            await h.http.get("/api/v1/agent/calls", headers=jeff),
            await h.http.get("/api/v1/agent/calls/call_x", headers=jeff),
            await h.http.get("/api/v1/agent/client-tools", headers=jeff),
            await h.http.delete("/api/v1/agent/client-tools", headers=jeff),
            await h.http.delete("/api/v1/agent/me", headers=jeff),
            await h.http.get("/api/v1/admin/conversations/nowhere", headers=boss),
        ]
        assert [r.status_code for r in answered] == [200, 404, 200, 204, 204, 404]
        for r in answered:
            assert r.headers["X-RateLimit-Limit"] == "3", r.request.url
            assert int(r.headers["X-RateLimit-Remaining"]) >= 0, r.request.url
            assert int(r.headers["X-RateLimit-Reset"]) >= time.time() - 1, r.request.url
        # Each scope keeps its own window: the second of "calls" leaves one, "me" still two.
        assert [answered[i].headers["X-RateLimit-Remaining"] for i in (0, 1, 4)] == ["2", "1", "2"]


async def test_webhook_turns_over_the_limit_are_dropped_and_the_user_told_once(start_server: Any) -> None:
    async with start_server(model=echo(), rate_limit_user="2/minute") as h:
        responses = [await h.user_says(f"message {i}") for i in range(5)]
        # Sendbird always gets 200: an error would only make it re-send.
        assert [r.status_code for r in responses] == [200] * 5
        assert [r.json()["status"] for r in responses] == [
            "queued",
            "queued",
            "ignored",
            "ignored",
            "ignored",
        ]
        await h.sendbird.wait_for(lambda msgs: len(msgs) >= 3)
        await h.idle()
        texts = sorted(m.text for m in h.sendbird.messages)
        assert texts.count("ok") == 2
        [notice] = [t for t in texts if t != "ok"]
        assert notice.startswith("You're sending messages too fast")
        # A re-delivery of an accepted message is a duplicate, not another hit.
        again = await h.user_says("message 0", message_id=1000)
        assert again.json() == {"status": "duplicate"}


async def test_an_admins_chat_turns_get_the_admin_limit(start_server: Any, directory: Any) -> None:
    async with start_server(model=echo(), rate_limit_user="2/minute", rate_limit_admin="4/minute") as h:
        # hyunwoo has the admin role in the directory; jeff does not.
        admin = [
            (await h.user_says(f"admin {i}", user="hyunwoo", channel="admin-dm")).json() for i in range(5)
        ]
        member = [(await h.user_says(f"member {i}", channel="member-dm")).json() for i in range(3)]
        assert [r["status"] for r in admin] == ["queued"] * 4 + ["ignored"]
        assert [r["status"] for r in member] == ["queued"] * 2 + ["ignored"]


async def test_a_message_that_is_too_long_is_explained_not_run(start_server: Any) -> None:
    prompts: list[str] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append("ran")
        return ModelResponse(parts=[TextPart("ok")])

    async with start_server(model=FunctionModel(fn), max_message_chars=100) as h:
        r = await h.user_says("가" * 101)
        assert r.json() == {"status": "ignored"}
        [notice] = await h.replies(1)
        assert notice.text == "메시지가 너무 길어요 (101자). 100자 이내로 나눠서 보내 주세요."
        assert prompts == []


async def test_deeply_nested_json_is_a_400_on_both_endpoints(start_server: Any) -> None:
    async with start_server(model=echo()) as h:
        for depth in (40, 100_000):
            body = ("[" * depth + "]" * depth).encode()
            r = await h.post_tool_message(body, token=issue_token(JWT_SECRET, "jeff"))
            assert r.status_code == 400 and r.json()["error"]["code"] in ("json_too_deep", "invalid_json")
            r = await h.post_webhook(body)
            assert r.status_code == 400
        nested: Any = {}
        for _ in range(40):
            nested = {"a": nested}
        body = json.dumps({"jsonrpc": "2.0", "id": "x", "result": nested}).encode()
        r = await h.post_tool_message(body, token=issue_token(JWT_SECRET, "jeff"))
        assert r.status_code == 400 and r.json()["error"]["code"] == "json_too_deep"


async def test_a_call_the_device_never_answers_expires_and_the_user_still_gets_an_answer(
    start_server: Any,
) -> None:
    async with start_server(model=calendar_model(), pending_call_ttl_s=1) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        sent = time.monotonic()
        [reply] = await h.replies(1, timeout=10)
        assert time.monotonic() - sent < 1 + 5  # within 5 s of the deadline
        assert reply.text.startswith("failed: Expired: the user's device did not answer in time")
        r = await h.answer(rpc["id"], result={"events": []})
        assert r.status_code == 410 and r.json()["error"]["code"] == "call_expired"


async def test_expiry_survives_a_worker_restart(start_server: Any) -> None:
    async with start_server(model=calendar_model(), pending_call_ttl_s=1) as h:
        await h.user_says("calendar")
        await h.rpc_requests(1)
    # No worker runs while the call expires; the deadline is kept in Redis, not in a timer.
    [(_, deadline)] = await h.redis.zrange(keys.deadlines(), 0, -1, withscores=True)
    await asyncio.sleep(max(0.0, deadline - time.time()) + 0.1)
    async with start_server(model=calendar_model(), pending_call_ttl_s=1) as h:
        [reply] = await h.replies(1, timeout=10)
        assert reply.text.startswith("failed: Expired")


async def test_a_device_tool_failing_again_and_again_is_not_sent_a_fourth_time(start_server: Any) -> None:
    error = {"code": -32010, "message": "PermissionRequired", "data": {"requiredPermission": "calendar.read"}}
    async with start_server(model=calendar_model(), max_client_failures=3) as h:
        for turn in range(3):
            await h.user_says(f"calendar {turn}")
            rpcs = await h.rpc_requests(turn + 1)
            await h.answer(rpcs[-1]["id"], error=error)
            await h.replies(turn + 1)
        await h.user_says("calendar again")
        replies = await h.replies(4)
        assert len(await h.rpc_requests(3)) == 3  # no fourth request went to the phone
        assert replies[-1].text.startswith("failed: get_calendar_events failed 3 times in a row")


async def test_a_step_sends_at_most_the_call_limit_to_the_device(start_server: Any) -> None:
    async with start_server(model=calendar_model(calls=5), max_calls_per_turn=3) as h:
        await h.user_says("all the calendars")
        rpcs = await h.rpc_requests(3)
        await h.idle()
        assert len([m for m in h.sendbird.messages if m.is_rpc]) == 3
        for rpc in rpcs:
            await h.answer(rpc["id"], result={"events": []})
        [reply] = await h.replies(1)
        assert reply.text.count("success") == 3 and reply.text.count("Too many device calls") == 2


async def test_the_failure_breaker_counts_per_person_and_not_their_refusals(start_server: Any) -> None:
    required = {
        "code": -32010,
        "message": "PermissionRequired",
        "data": {"requiredPermission": "calendar.read"},
    }
    canceled = {"code": -32002, "message": "UserCanceled"}
    group = {"channel": "team", "members": ["jeff", "mina", BOT], "mentions": [BOT]}
    async with start_server(model=calendar_model(), max_client_failures=2) as h:
        # Mina says no three times: her phone works, and it is asked again.
        for turn in range(3):
            await h.user_says(f"calendar {turn}", user="mina", channel="mina-dm")
            rpc = (await h.rpc_requests(turn + 1, "mina-dm"))[-1]
            await h.answer(rpc["id"], error=canceled, user="mina")
            await h.replies(turn + 1, "mina-dm")
        await h.user_says("calendar", user="mina", channel="mina-dm")
        rpc = (await h.rpc_requests(4, "mina-dm"))[-1]
        await h.answer(rpc["id"], error=required, user="mina")
        await h.replies(4, "mina-dm")

        # Her phone fails again in the group: her calendar is off (everywhere), Jeff's is not.
        # (In the group each request goes to the person's 1:1 channel; the group hears it went there.)
        await h.user_says("@bot calendar", user="mina", **group)
        await h.replies(1, "team")
        [rpc] = await h.rpc_requests(1, h.direct_channel("mina") or "")
        await h.answer(rpc["id"], error=required, user="mina")
        await h.replies(2, "team")
        await h.user_says("@bot my calendar", **group)
        await h.replies(3, "team")
        [for_jeff] = await h.rpc_requests(1, h.direct_channel("jeff") or "")
        assert (await h.answer(for_jeff["id"], result={"events": []})).status_code == 202
        await h.replies(4, "team")
        await h.user_says("calendar", user="mina", channel="mina-dm")
        replies = await h.replies(5, "mina-dm")
        assert replies[-1].text.startswith("failed: get_calendar_events failed 2 times in a row")
        assert len(await h.rpc_requests(4, "mina-dm")) == 4  # no fifth request went to her phone
