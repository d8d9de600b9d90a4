"""The metrics an operator scrapes: every turn outcome, turn time, tool calls by kind, tokens, acks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import JWT_SECRET, Harness, calendar_model
from truloop_assistant.agent.recorder import ToolLabels
from truloop_assistant.auth import issue_token
from truloop_assistant.store.ledger_records import CallKind, Flag, LedgerCall


async def scrape(h: Harness) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = (await h.http.get("/metrics")).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def delta(after: dict[Any, float], before: dict[Any, float], name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_a_deferred_turn_shows_in_the_metrics(start_server: Any) -> None:
    async with start_server(model=calendar_model()) as h:
        before = await scrape(h)
        await h.user_says("이번 주 일정 알려줘")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"events": []})
        await h.replies(1)
        await h.idle()
        after = await scrape(h)

    assert delta(after, before, "truloop_turns_total", outcome="paused") == 1
    assert delta(after, before, "truloop_turns_total", outcome="answered") == 1
    assert delta(after, before, "truloop_turn_seconds_count") == 2  # the run and the resume
    device = {"tool": "get_calendar_events", "kind": "device"}
    assert delta(after, before, "truloop_tool_calls_total", **device, status="success") == 1
    assert delta(after, before, "truloop_tool_call_seconds_count", **device) == 1
    assert delta(after, before, "truloop_model_request_seconds_count", outcome="ok") == 2
    assert delta(after, before, "truloop_model_tokens_total", direction="input") > 0
    assert delta(after, before, "truloop_webhook_ack_seconds_count") == 1


async def test_a_failed_turn_is_counted_as_failed(start_server: Any) -> None:
    def broken(messages: Any, info: Any) -> Any:
        raise RuntimeError("provider down")

    async with start_server(model=FunctionModel(broken)) as h:
        before = await scrape(h)
        await h.user_says("hello")
        await h.replies(1)
        after = await scrape(h)
    assert delta(after, before, "truloop_turns_total", outcome="failed") == 1
    assert delta(after, before, "truloop_model_request_seconds_count", outcome="error") == 1


async def test_every_tool_message_is_counted_by_the_status_it_got(start_server: Any) -> None:
    async with start_server(model=calendar_model()) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        before = await scrape(h)
        token = issue_token(JWT_SECRET, "jeff")
        assert (await h.post_tool_message(b"x" * (300 * 1024), token=token)).status_code == 413
        assert (await h.post_tool_message(b"{}", token=None)).status_code == 401
        assert (await h.post_tool_message(b"garbage", token=token)).status_code == 400
        assert (await h.answer("call_" + "0" * 32, result={})).status_code == 404
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 200
        after = await scrape(h)

    for status in ("413", "401", "400", "404", "202", "200"):
        assert delta(after, before, "truloop_tool_messages_total", status=status) == 1, status


async def test_tool_names_a_model_invents_share_one_label(start_server: Any) -> None:
    invented = [f"frobnicate_calendar_{n}" for n in range(3)]

    def inventive(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked = sum(isinstance(m, ModelResponse) for m in messages)  # each invented name is told apart
        if asked < len(invented):
            return ModelResponse(parts=[ToolCallPart(invented[asked], {})])
        return ModelResponse(parts=[TextPart("done")])

    async with start_server(model=FunctionModel(inventive)) as h:
        before = await scrape(h)
        await h.user_says("hello")
        await h.replies(1)
        await h.idle()
        after = await scrape(h)
        text = (await h.http.get("/metrics")).text
    assert (
        delta(after, before, "truloop_tool_calls_total", tool="unknown", kind="server", status="invalid") == 3
    )
    assert not any(name in text for name in invented)


def test_the_tool_label_keeps_the_names_the_server_knows() -> None:
    labels = ToolLabels(lambda: {"crm_lookup_customer"})

    def call(tool: str, kind: CallKind, flag: Flag | None = None) -> LedgerCall:
        return LedgerCall(call_id="c", tool=tool, kind=kind, status="success", flag=flag, started_at=0.0)

    assert labels(call("get_calendar_events", "device")) == "get_calendar_events"
    assert labels(call("create_event", "approval")) == "create_event"
    assert labels(call("crm_lookup_customer", "server")) == "crm_lookup_customer"
    assert labels(call("scan_receipt", "device")) == "declared"  # an app's own device tool
    assert labels(call("scan_receipt", "device", "invalid")) == "unknown"
    assert labels(call("made_up_tool", "server", "invalid")) == "unknown"


async def test_a_streamed_answer_counts_its_time_and_tokens(start_server: Any) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in ("Your week ", "is free ", "on Thursday."):
            yield piece

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("a streaming server asks for the stream")

    async with start_server(model=FunctionModel(whole, stream_function=stream), stream=True) as h:
        before = await scrape(h)
        await h.user_says("how is my week?")
        shown = lambda _: any("on Thursday." in m["message"] for m in h.sendbird.shown_in("ch-1"))  # noqa: E731
        await h.sendbird.wait_for(shown, timeout=10)
        await h.idle()
        after = await scrape(h)
    assert delta(after, before, "truloop_model_request_seconds_count", outcome="ok") == 1
    assert delta(after, before, "truloop_model_tokens_total", direction="input") > 0
    assert delta(after, before, "truloop_model_tokens_total", direction="output") > 0
