"""Traces through the real processes: one trace per turn, from the webhook to the answer after the phone.

``truloop-assistant serve`` and ``truloop-assistant worker`` run as subprocesses and export over
OTLP/HTTP to a receiver in this test; a second pair, with no tracing variables, must send nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import re
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, CALENDAR_ARGS, JWT_SECRET, serve, sign, webhook_payload
from truloop_assistant import tracing
from truloop_assistant.auth import issue_token
from truloop_assistant.local.embedded_redis import free_port

PROMPT = "what is on my calendar this week, zebrafinch"
ANSWER = "You have the quarterly aardvark review on Tuesday."
EVENT_TITLE = "quarterly aardvark review"
CONTENTS = ("zebrafinch", "aardvark")
"""Words only the user's message, the phone's answer and the model's answer contain."""
FOREIGN_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
FOREIGN = {
    "traceparent": f"00-{FOREIGN_TRACE}-00f067aa0ba902b7-01",
    "tracestate": "mallory=1",
    "baggage": "truloop.user_id=mallory,enduser.id=mallory,injected=quokka",
}
"""What a webhook or phone sends to join a trace of its own and put words in our spans."""


# -- a local OTLP/HTTP receiver ----------------------------------------------------------------


@dataclass
class ReceivedSpan:
    service: str
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    attributes: dict[str, Any]
    links: list[tuple[str, str]]
    """(trace id, span id) of each link."""


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


@dataclass
class OtlpReceiver:
    """Accepts ``POST /v1/traces`` (protobuf, as the OTLP/HTTP exporter sends it) and keeps the spans."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    posts: list[str] = field(default_factory=list)
    url: str = ""
    received: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/{signal}", self._export, methods=["POST"])])

    async def wait_for(self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 15) -> None:
        try:
            async with asyncio.timeout(timeout):
                while not predicate(self.spans):
                    self.received.clear()
                    await self.received.wait()
        except TimeoutError:
            raise AssertionError(f"spans received: {[(s.service, s.name) for s in self.spans]}") from None

    async def _export(self, request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        self.posts.append(request.url.path)
        if request.url.path == "/v1/traces":
            export = ExportTraceServiceRequest.FromString(body)
            for resource_spans in export.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for s in scope_spans.spans:
                        self.spans.append(
                            ReceivedSpan(
                                service=resource.get("service.name", ""),
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent_span_id=s.parent_span_id.hex(),
                                name=s.name,
                                kind=s.kind,
                                attributes={a.key: _value(a.value) for a in s.attributes},
                                links=[(link.trace_id.hex(), link.span_id.hex()) for link in s.links],
                            )
                        )
        self.received.set()
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf")


# -- the server's two processes --------------------------------------------------------------


def calendar_then_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Ask the phone for this week's calendar; once it answered, say what is on it."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": ANSWER}
    call = {"id": "call_calendar", "type": "function",
            "function": {"name": "get_calendar_events", "arguments": json.dumps(CALENDAR_ARGS)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def server_env(redis_url: str, sendbird: FakeSendbird, llm_url: str, *, queue: str) -> dict[str, str]:
    """The environment of both processes, without any tracing variable of this machine."""
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("TRULOOP_", "OTEL_", "LOGFIRE_", "OPENAI_"))
    }
    return {
        **keep,
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": sendbird.url,
        # Unpaced: a send that waits for its slot in the app-wide budget may go out after its step's
        # span has ended (still in the turn's trace, by its traceparent), and this test reads the tree.
        "TRULOOP_SENDBIRD_RATES": "GET=1000,POST=1000,PUT=1000,DELETE=1000",
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_QUEUE_NAME": queue,
        "TRULOOP_MODEL": "openai-chat:fake-model",
        "OPENAI_BASE_URL": f"{llm_url}/v1",
        "OPENAI_API_KEY": "fake",
    }


@contextlib.asynccontextmanager
async def processes(
    env: dict[str, str], logs: Path, *, metrics_port: int | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """``serve`` and ``worker``; stopped with SIGTERM at the end, killed if that takes a while."""
    port = free_port()
    cli = [sys.executable, "-m", "truloop_assistant.cli"]
    procs: list[asyncio.subprocess.Process] = []
    worker = ["worker", "--concurrency", "2"]
    if metrics_port is not None:
        worker += ["--metrics-port", str(metrics_port)]
    for name, args in (("api", ["serve", "--port", str(port)]), ("worker", worker)):
        with (logs / f"{name}.log").open("wb") as log:
            procs.append(
                await asyncio.create_subprocess_exec(
                    *cli, *args, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT
                )
            )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            async with asyncio.timeout(30):
                while True:
                    assert procs[0].returncode is None, (logs / "api.log").read_text()
                    with contextlib.suppress(httpx.HTTPError):
                        if (await http.get("/readyz")).status_code == 200:
                            break
                    await asyncio.sleep(0.1)
            yield http
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
        for proc in procs:
            try:
                async with asyncio.timeout(3):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def deferred_turn(
    http: httpx.AsyncClient,
    sendbird: FakeSendbird,
    *,
    channel: str,
    message_id: int,
    headers: dict[str, str] | None = None,
) -> None:
    """A message that asks the phone for the calendar, the phone's answer, and the model's answer;
    both requests with ``headers`` besides their own."""
    body = json.dumps(webhook_payload(PROMPT, channel=channel, message_id=message_id)).encode()
    r = await http.post(
        "/api/v1/webhooks/sendbird",
        content=body,
        headers={**(headers or {}), "x-sendbird-signature": sign(body)},
    )
    assert r.json() == {"status": "queued"}, r.text
    [request] = await sendbird.wait_count(1, channel, timeout=30)
    assert request.rpc["method"] == "calendar.getEvents"
    start = request.rpc["params"]["startDate"][:10]
    event = {
        "id": "e1",
        "title": EVENT_TITLE,
        "start": {"dateTime": f"{start}T10:00:00+09:00"},
        "end": {"dateTime": f"{start}T11:00:00+09:00"},
    }
    r = await http.post(
        "/api/v1/agent/tool-message",
        headers={**(headers or {}), "authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"},
        json={"jsonrpc": "2.0", "id": request.rpc["id"], "result": {"events": [event]}},
    )
    assert r.json() == {"status": "resuming"}, r.text
    messages = await sendbird.wait_count(2, channel, timeout=30)
    assert messages[-1].text == ANSWER


def complete(spans: list[ReceivedSpan]) -> bool:
    """Both steps, the sends after each, and both requests have been exported."""
    names = [s.name for s in spans]
    routes = {s.attributes.get("http.route") for s in spans}
    return (
        names.count("turn") == 2
        and names.count("deliver") == 2
        and {"/api/v1/webhooks/sendbird", "/api/v1/agent/tool-message"} <= routes
    )


def default_otlp_port_free() -> bool:
    """Whether 127.0.0.1:4318, where an OTLP exporter with no endpoint would send, can be listened on."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", 4318))
        except OSError:
            return False
    return True


# -- the test ----------------------------------------------------------------------------------


@pytest.mark.timeout(120)
async def test_a_deferred_turn_is_one_trace_across_the_api_and_the_worker_and_none_of_its_callers(
    redis: Any, redis_url: str, sendbird: FakeSendbird, tmp_path: Path
) -> None:
    """The webhook and the phone both send a trace context and baggage of their own (anyone can):
    the turn's trace is the server's all the same, and their words are in none of its spans."""
    receiver, stray = OtlpReceiver(), OtlpReceiver()
    llm = FakeLLM(script=calendar_then_answer)
    llm_port, receiver_port = free_port(), free_port()
    traced_env = {
        **server_env(redis_url, sendbird, f"http://127.0.0.1:{llm_port}", queue="traced"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver_port}",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # export spans as they end, not at exit
    }
    quiet_env = {
        **server_env(redis_url, sendbird, f"http://127.0.0.1:{llm_port}", queue="quiet"),
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # were anything exported, it would be by the end
    }
    (tmp_path / "traced").mkdir()
    (tmp_path / "quiet").mkdir()

    seen: dict[str, Any] = {}
    metrics_port = free_port()

    async def traced() -> None:
        async with processes(traced_env, tmp_path / "traced", metrics_port=metrics_port) as http:
            await deferred_turn(http, sendbird, channel="traced-1", message_id=7001, headers=FOREIGN)
            await receiver.wait_for(complete)
            # The same turn in the ledger (served by the API) and the worker's own metrics.
            admin = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'ops', role='admin')}"}
            seen["ledger"] = (await http.get("/api/v1/admin/conversations/traced-1", headers=admin)).json()
            seen["metrics"] = (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text

    async def quiet() -> None:
        async with processes(quiet_env, tmp_path / "quiet") as http:
            await deferred_turn(http, sendbird, channel="quiet-1", message_id=7002)

    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(serve(llm.app(), llm_port))
        await stack.enter_async_context(serve(receiver.app(), receiver_port))
        if default_otlp_port_free():
            await stack.enter_async_context(serve(stray.app(), 4318))
        await asyncio.gather(traced(), quiet())

    spans = receiver.spans
    by_id = {s.span_id: s for s in spans}
    [webhook] = [s for s in spans if s.attributes.get("http.route") == "/api/v1/webhooks/sendbird"]
    [answered] = [s for s in spans if s.attributes.get("http.route") == "/api/v1/agent/tool-message"]
    assert webhook.service == answered.service == "truloop-assistant-api"
    trace_id = webhook.trace_id
    in_trace = [s for s in spans if s.trace_id == trace_id]

    # The callers' trace is not continued, nor their baggage taken: each request starts a trace of
    # the server's, and only notes the trace id it was sent.
    assert trace_id != FOREIGN_TRACE and not webhook.parent_span_id
    assert answered.trace_id != FOREIGN_TRACE and not answered.parent_span_id
    assert not [s for s in spans if s.trace_id == FOREIGN_TRACE]
    assert webhook.attributes["truloop.inbound_trace_id"] == FOREIGN_TRACE
    assert answered.attributes["truloop.inbound_trace_id"] == FOREIGN_TRACE
    for s in spans:
        text = json.dumps(s.attributes, default=str)
        assert "mallory" not in text and "quokka" not in text, (s.name, s.attributes)

    # The steps: the message's, a child of the webhook request; the resume's, in the same trace
    # (continuing the paused step), linked to the request that brought the phone's answer.
    turns = {s.attributes["truloop.kind"]: s for s in spans if s.name == "turn"}
    assert set(turns) == {"message", "resume"}
    first, resume = turns["message"], turns["resume"]
    assert first.service == resume.service == "truloop-assistant-worker"
    assert first.trace_id == resume.trace_id == trace_id
    assert first.parent_span_id == webhook.span_id
    assert resume.parent_span_id == first.span_id
    assert resume.links == [(answered.trace_id, answered.span_id)]
    for step in (first, resume):
        assert step.attributes["truloop.turn_id"] == "m7001"
        assert step.attributes["truloop.channel_url"] == "traced-1"
        assert step.attributes["truloop.user_id"] == "jeff"

    def under(span: ReceivedSpan, ancestor: ReceivedSpan) -> bool:
        while span.parent_span_id in by_id:
            span = by_id[span.parent_span_id]
            if span.span_id == ancestor.span_id:
                return True
        return False

    # pydantic-ai's own spans (a model request per step) and the sends to Sendbird, in both steps.
    model_requests = [s for s in in_trace if s.name.startswith("chat ")]
    sends = [
        s
        for s in in_trace
        if s.kind == 3  # client
        and str(s.attributes.get("url.full") or s.attributes.get("http.url")).startswith(sendbird.url)
        and str(s.attributes.get("url.full") or s.attributes.get("http.url")).endswith("/messages")
    ]
    for step in (first, resume):
        assert any(under(s, step) for s in model_requests), [s.name for s in in_trace]
        assert any(under(s, step) for s in sends), [(s.name, s.attributes) for s in in_trace]
    assert {s.service for s in in_trace} == {"truloop-assistant-api", "truloop-assistant-worker"}
    sent = sendbird.in_channel("traced-1")
    assert all(m.headers["traceparent"].split("-")[1] == trace_id for m in sent)
    assert not [m.headers for m in sent if "baggage" in m.headers or "tracestate" in m.headers]

    # The worker's lines of each step name the turn's trace; with tracing off, no line names one.
    worker_log = (tmp_path / "traced" / "worker.log").read_text()
    steps = [line for line in worker_log.splitlines() if re.search(r"step \d+ of turn m7001", line)]
    assert len(steps) == 2 and all(f" trace_id={trace_id} span_id=" in line for line in steps), worker_log
    assert "trace_id=" not in (tmp_path / "quiet" / "worker.log").read_text()

    # No message contents in any span, by default.
    for s in spans:
        text = json.dumps(s.attributes, default=str) + s.name
        assert not any(word in text for word in CONTENTS), (s.name, s.attributes)

    # Tracing off: nothing instrumented, nothing sent.
    assert all("traceparent" not in m.headers for m in sendbird.in_channel("quiet-1"))
    assert not any(s.attributes.get("truloop.channel_url") == "quiet-1" for s in spans)
    assert stray.posts == []

    # The ledger has the turn with its device call under the id the phone saw, with timings.
    [turn] = seen["ledger"]["turns"]
    assert (turn["turn_id"], turn["state"], turn["model_requests"]) == ("m7001", "answered", 2)
    [call] = turn["calls"]
    assert (call["tool"], call["kind"], call["status"]) == ("get_calendar_events", "device", "success")
    assert call["call_id"].startswith("call_") and call["duration_ms"] > 0
    assert turn["started_at"] <= call["started_at"] <= call["ended_at"] <= turn["ended_at"]
    # The worker counted it: the paused step, the answered step, the device call.
    worker = seen["metrics"]
    assert 'truloop_turns_total{outcome="paused"} 1.0' in worker
    assert 'truloop_turns_total{outcome="answered"} 1.0' in worker
    assert 'truloop_tool_calls_total{kind="device",status="success",tool="get_calendar_events"} 1.0' in worker
    assert "truloop_turn_seconds_count 2.0" in worker


# -- in this process -----------------------------------------------------------------------------


def test_with_no_tracing_variables_nothing_is_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [*(k for k in os.environ if k.startswith("OTEL_")), "LOGFIRE_TOKEN"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tracing, "_enabled", None)
    assert tracing.configure("truloop-assistant-api") is False
    assert tracing.configure("truloop-assistant-worker") is False  # decided once per process
    assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"  # no SDK installed
    assert tracing.current_traceparent() is None
    with tracing.turn_step("message", channel_url="c", turn_id="t", user_id="u", parent=None) as step:
        assert step is None


def test_redis_commands_are_recorded_only_inside_a_trace() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    redis_tracer = tracing._ChildSpansOnly(provider).get_tracer("redis")
    with redis_tracer.start_as_current_span("GET") as span:
        assert not span.is_recording()  # polling, heartbeats: no trace of their own
    with provider.get_tracer("app").start_as_current_span("turn"):
        with redis_tracer.start_as_current_span("GET"):
            pass
        redis_tracer.start_span("SET").end()
    assert [s.name for s in exporter.get_finished_spans()] == ["GET", "SET", "turn"]
