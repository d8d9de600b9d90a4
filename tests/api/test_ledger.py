"""The tool-call ledger an operator reads: every call of a turn, under the id the phone saw, with timings
and results."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS, JWT_SECRET, Harness
from truloop_assistant.agent.agents import build_member_agent
from truloop_assistant.auth import issue_token
from truloop_assistant.store.ledger import (
    ARG_CHARS,
    REDACTED,
    RESULT_BYTES,
    TURN_RESULT_BYTES,
    kept_result,
    redact,
)
from truloop_assistant.tools.agent_deps import AgentDeps

ADMIN = issue_token(JWT_SECRET, "ops", role="admin")
EVENTS = {"events": [{"id": "e1", "title": "팀 미팅", "start": {"dateTime": "x"}, "end": {"dateTime": "y"}}]}


def busy_model(seen: dict[str, str] | None = None) -> FunctionModel:
    """Asks the clock, makes a call to a tool that does not exist, then asks the phone's calendar.

    ``seen``: each tool's result as the model was shown it.
    """

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if seen is not None:
            seen.update({p.tool_name: p.model_response_str() for p in returns})
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
    seen: dict[str, str] = {}
    async with start_server(model=busy_model(seen)) as h:
        await h.user_says("이번 주 일정 알려줘")
        [rpc] = await h.rpc_requests(1)

        # While the phone has it, the call is pending, with the time it has left.
        r = await ledger(h)
        assert r.status_code == 200
        [turn] = r.json()["turns"]
        assert (turn["state"], turn["user_id"], turn["ended_at"]) == ("paused", "jeff", None)
        [waiting] = r.json()["pending"]
        assert waiting["call_id"] == rpc["id"] and 3500 < waiting["expires_in_s"] <= 3600
        asked = next(c for c in turn["calls"] if c["call_id"] == rpc["id"])
        assert (asked["status"], asked["result"]) == ("pending", None)  # no answer yet

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
    assert invalid["result"] is None  # it never ran

    clock = calls["get_current_datetime"]
    assert (clock["kind"], clock["status"], clock["error"]) == ("server", "success", None)
    assert clock["duration_ms"] >= 0 and clock["started_at"] <= clock["ended_at"]
    # The value the tool returned, as the model was shown it.
    assert clock["result"] == json.loads(seen["get_current_datetime"]) and clock["result_cut"] is False
    assert clock["result"]["timezone"] == "Asia/Seoul"

    device = calls["get_calendar_events"]
    assert device["call_id"] == rpc["id"]  # the id the phone saw, not the model's
    assert (device["kind"], device["status"]) == ("device", "success")
    assert device["args"]["start_date"] == CALENDAR_ARGS["start_date"]
    assert device["duration_ms"] > 0
    assert device["result"] == EVENTS  # what the phone answered


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
        assert {(c["status"], c["result"]) for c in turn["calls"] if c["kind"] == "device"} == {
            ("expired", None)
        }

    async with start_server(model=FunctionModel(fn)) as h:
        await h.user_says("first", channel="cut", message_id=1)
        await h.rpc_requests(1, channel="cut")
        await h.user_says("never mind", channel="cut", message_id=2)
        await h.replies(1, channel="cut")
        await h.idle()
        newest, cut = (await ledger(h, "cut")).json()["turns"]
        assert cut["state"] == "superseded" and cut["ended_at"] is not None
        assert [(c["status"], c["result"]) for c in cut["calls"] if c["kind"] == "device"] == [
            ("superseded", None)
        ]
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
        assert asked["result"] == {"confirmed": False}  # the user's answer, as the phone gave it
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


def results_agent() -> Any:
    """The member agent plus tools that return a secret, a large report and pages, driven by a FunctionModel.

    "report": the account (a secret in it) and the report, then the phone's calendar; "pages": 12 pages
    at once.
    """
    extra: FunctionToolset[AgentDeps] = FunctionToolset()

    @extra.tool
    async def get_account(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The user's account."""
        return {"name": "Jeff", "session": {"access_token": "tok-live-123", "expires_in": 3600}}

    @extra.tool
    async def export_report(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """A large report."""
        return {"rows": [{"n": i, "text": "가나다라 " * 100} for i in range(100)]}

    @extra.tool
    async def read_page(ctx: RunContext[AgentDeps], n: int) -> dict[str, Any]:
        """One page of a document."""
        return {"page": n, "lines": ["x" * 280] * 6}

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if any(p.tool_name in ("get_calendar_events", "read_page") for p in returns):
            return ModelResponse(parts=[TextPart("done")])
        if returns:
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        prompt = str(next(p.content for p in messages[-1].parts if p.part_kind == "user-prompt"))
        if prompt == "pages":
            return ModelResponse(parts=[ToolCallPart("read_page", {"n": n}) for n in range(12)])
        return ModelResponse(parts=[ToolCallPart("get_account", {}), ToolCallPart("export_report", {})])

    return build_member_agent(FunctionModel(fn), extra_toolsets=[extra], tool_timeout_s=10)


async def test_results_keep_no_secret_and_long_ones_are_cut(start_server: Any) -> None:
    synced = {
        "syncToken": "sync-secret-9",
        "events": [
            {
                "id": f"e{i}",
                "title": "주간 회의",
                "start": {"dateTime": "2026-11-23T10:00:00+09:00"},
                "end": {"dateTime": "2026-11-23T11:00:00+09:00"},
            }
            for i in range(40)
        ],
    }
    async with start_server(agent=results_agent()) as h:
        await h.user_says("report", message_id=600)
        [rpc] = await h.rpc_requests(1)
        assert (await h.answer(rpc["id"], result=synced)).status_code == 202
        await h.replies(1)
        await h.user_says("pages", message_id=601)
        await h.replies(2)
        await h.idle()
        pages_turn, report_turn = (await ledger(h)).json()["turns"]

    calls = {c["tool"]: c for c in report_turn["calls"]}
    account = calls["get_account"]
    assert account["result"] == {"name": "Jeff", "session": {"access_token": REDACTED, "expires_in": 3600}}
    assert account["result_cut"] is False

    # Cut: strings as in arguments, then the whole to RESULT_BYTES of JSON, saying so.
    report = calls["export_report"]
    assert report["status"] == "success" and report["result_cut"] is True
    assert isinstance(report["result"], str) and report["result"].startswith(
        '{"rows": [{"n": 0, "text": "가나다라'
    )
    assert len(report["result"].encode()) <= RESULT_BYTES and report["result"].endswith("…")

    device = calls["get_calendar_events"]
    assert device["status"] == "success" and device["result_cut"] is True
    assert device["result"].startswith(f'{{"syncToken": "{REDACTED}", "events": [{{"id": "e0"')
    assert "sync-secret-9" not in json.dumps(report_turn)

    # A turn's results stay within TURN_RESULT_BYTES: the first calls keep theirs, the rest none.
    pages = pages_turn["calls"]  # in the order they ran
    assert [c["status"] for c in pages] == ["success"] * 12
    kept = [c for c in pages if c["result"] is not None]
    assert 5 <= len(kept) < 12 and pages[: len(kept)] == kept
    assert all(c["result"] == {"page": c["args"]["n"], "lines": ["x" * 280] * 6} for c in kept)
    assert sum(len(json.dumps(c["result"], ensure_ascii=False).encode()) for c in kept) <= TURN_RESULT_BYTES
    assert all(c["result_cut"] for c in pages[len(kept) :])


def test_results_are_kept_in_json_form_with_secrets_redacted_and_long_values_cut() -> None:
    assert kept_result({"user": {"password": "pw", "id": 7}}) == (
        {"user": {"password": REDACTED, "id": 7}},
        False,
    )
    assert kept_result("done") == ("done", False) and kept_result(None) == (None, False)
    assert kept_result(b"\x00\xff") == ("AP8=", False)  # bytes as base64, as the model is sent them

    text, cut = kept_result("가" * 400)
    assert cut and len(text) == ARG_CHARS + 1 and text.endswith("…")
    items, cut = kept_result(list(range(60)))
    assert cut and items == list(range(50))

    big, cut = kept_result({"token": "t", "rows": [{"n": n, "note": "가" * 200} for n in range(40)]})
    assert cut and isinstance(big, str) and big.startswith(f'{{"token": "{REDACTED}", "rows": [{{"n": 0')
    assert RESULT_BYTES - 4 <= len(big.encode()) <= RESULT_BYTES


def test_secrets_in_arguments_are_redacted_and_long_text_cut() -> None:
    args = {"api_key": "sk-1", "headers": {"Authorization": "Bearer x", "accept": "json"}, "note": "가" * 400}
    kept = redact(args)
    assert kept["api_key"] == REDACTED and kept["headers"] == {"Authorization": REDACTED, "accept": "json"}
    assert len(kept["note"]) == 301 and kept["note"].endswith("…")
