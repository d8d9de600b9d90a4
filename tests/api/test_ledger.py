"""The tool-call ledger an operator reads: every call of a turn, under the id the phone saw, with timings."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS, JWT_SECRET, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.store.ledger import REDACTED, redact

ADMIN = issue_token(JWT_SECRET, "ops", role="admin")
EVENTS = {"events": [{"id": "e1", "title": "팀 미팅", "start": {"dateTime": "x"}, "end": {"dateTime": "y"}}]}


def busy_model() -> FunctionModel:
    """Asks the clock, makes a call to a tool that does not exist, then asks the phone's calendar."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if any(p.tool_name == "get_calendar_events" for p in returns):
            return ModelResponse(parts=[TextPart("one meeting")])
        if any(p.tool_name == "get_current_datetime" for p in returns):
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        if any(getattr(p, "tool_name", None) == "book_room" for p in last.parts):
            return ModelResponse(parts=[ToolCallPart("get_current_datetime", {})])
        return ModelResponse(parts=[ToolCallPart("book_room", {"room": "5F"})])

    return FunctionModel(fn)


async def ledger(h: Harness, channel: str = "ch-1", token: str = ADMIN) -> Any:
    return await h.http.get(
        f"/api/v1/admin/conversations/{channel}", headers={"authorization": f"Bearer {token}"}
    )


async def test_a_deferred_turn_is_in_the_ledger_with_every_call_and_its_timings(start_server: Any) -> None:
    async with start_server(model=busy_model()) as h:
        await h.user_says("이번 주 일정 알려줘")
        [rpc] = await h.rpc_requests(1)

        # While the phone has it, the call is pending, with the time it has left.
        r = await ledger(h)
        assert r.status_code == 200
        [turn] = r.json()["turns"]
        assert (turn["state"], turn["user_id"], turn["ended_at"]) == ("paused", "jeff", None)
        [waiting] = r.json()["pending"]
        assert waiting["call_id"] == rpc["id"] and 3500 < waiting["expires_in_s"] <= 3600

        await h.answer(rpc["id"], result=EVENTS)
        await h.replies(1)
        await h.idle()
        body = (await ledger(h)).json()

    assert body["channel_url"] == "ch-1" and body["pending"] == []
    [turn] = body["turns"]
    assert turn["state"] == "answered" and turn["ended_at"] >= turn["started_at"]
    assert turn["model_requests"] == 4 and turn["input_tokens"] > 0 and turn["output_tokens"] > 0
    calls = {c["tool"]: c for c in turn["calls"]}
    assert set(calls) == {"book_room", "get_current_datetime", "get_calendar_events"}

    invalid = calls["book_room"]
    assert (invalid["kind"], invalid["status"], invalid["flag"]) == ("server", "failed", "invalid")
    assert invalid["args"] == {"room": "5F"} and "book_room" in invalid["error"]

    clock = calls["get_current_datetime"]
    assert (clock["kind"], clock["status"], clock["error"]) == ("server", "success", None)
    assert clock["duration_ms"] >= 0 and clock["started_at"] <= clock["ended_at"]

    device = calls["get_calendar_events"]
    assert device["call_id"] == rpc["id"]  # the id the phone saw, not the model's
    assert (device["kind"], device["status"]) == ("device", "success")
    assert device["args"]["start_date"] == CALENDAR_ARGS["start_date"]
    assert device["duration_ms"] > 0


async def test_declined_superseded_and_expired_calls_say_so(start_server: Any) -> None:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[
                ToolCallPart("save_memory", {"text": "x"}),
                ToolCallPart("get_calendar_events", CALENDAR_ARGS),
            ]
        )

    async with start_server(model=FunctionModel(fn), pending_call_ttl_s=1) as h:
        await h.user_says("first", channel="expires")
        await h.rpc_requests(1, channel="expires")
        await h.replies(1, channel="expires", timeout=15)  # nobody answers: it expires
        await h.idle()
        [turn] = (await ledger(h, "expires")).json()["turns"]
        assert turn["state"] == "answered"
        assert {c["status"] for c in turn["calls"] if c["kind"] == "device"} == {"expired"}

    async with start_server(model=FunctionModel(fn)) as h:
        await h.user_says("first", channel="cut", message_id=1)
        await h.rpc_requests(1, channel="cut")
        await h.user_says("never mind", channel="cut", message_id=2)
        await h.replies(1, channel="cut")
        await h.idle()
        newest, cut = (await ledger(h, "cut")).json()["turns"]
        assert cut["state"] == "superseded" and cut["ended_at"] is not None
        assert [c["status"] for c in cut["calls"] if c["kind"] == "device"] == ["superseded"]
        assert newest["state"] == "answered"

    meeting = {
        "title": "Design review",
        "start_time": "2026-12-02T10:00:00+09:00",
        "end_time": "2026-12-02T11:00:00+09:00",
    }

    def plan(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("not created")])
        return ModelResponse(parts=[ToolCallPart("create_event", meeting)])

    async with start_server(model=FunctionModel(plan)) as h:
        await h.user_says("set up the review", channel="no", message_id=500)  # ids are app-wide
        [rpc] = await h.rpc_requests(1, channel="no")
        answered = await h.answer(rpc["id"], result={"confirmed": False})
        assert answered.status_code == 202, answered.text
        await h.replies(1, channel="no")
        await h.idle()
        [turn] = (await ledger(h, "no")).json()["turns"]
        [asked] = turn["calls"]  # the tool itself never ran
        assert (asked["call_id"], asked["tool"], asked["kind"]) == (rpc["id"], "create_event", "approval")
        assert (asked["status"], asked["error"]) == ("denied", "the user declined")
        assert asked["args"]["title"] == "Design review"


async def test_only_admins_read_it_and_unknown_conversations_are_404(start_server: Any) -> None:
    async with start_server(model=FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("hi")]))) as h:
        await h.user_says("hello")
        await h.replies(1)
        await h.idle()
        assert (await ledger(h, token=issue_token(JWT_SECRET, "jeff"))).status_code == 403
        r = await h.http.get("/api/v1/admin/conversations/ch-1")
        assert r.status_code == 401
        r = await ledger(h, "nobody-here")
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_conversation"
        [turn] = (await ledger(h)).json()["turns"]
        assert turn["state"] == "answered" and turn["calls"] == []


def test_secrets_in_arguments_are_redacted_and_long_text_cut() -> None:
    args = {"api_key": "sk-1", "headers": {"Authorization": "Bearer x", "accept": "json"}, "note": "가" * 400}
    kept = redact(args)
    assert kept["api_key"] == REDACTED and kept["headers"] == {"Authorization": REDACTED, "accept": "json"}
    assert len(kept["note"]) == 301 and kept["note"].endswith("…")
