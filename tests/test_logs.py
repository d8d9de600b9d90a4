"""Log lines: a timestamp on each, text or JSON, the turn's fields, quiet libraries; their settings."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.test_typing import eventually
from tests.support import BOT, logging_restored
from truloop_assistant.config import ConfigError, load_log_settings, load_settings
from truloop_assistant.logs import (
    HANDLER_NAME,
    ContextFilter,
    configure_logging,
    current_context,
    log_context,
)
from truloop_assistant.store import keys

TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"
SECRET = "s" * 32


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """``configure_logging`` writing to a buffer; the root logger and the libraries' levels restored after."""
    with logging_restored():
        yield io.StringIO()


def lines(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


def test_text_lines_carry_a_timestamp_and_the_turn(logs: io.StringIO) -> None:
    configure_logging("INFO", "text", stream=logs)
    log = logging.getLogger("truloop_assistant.pipeline.test")

    log.info("outside")
    with log_context(turn_id="t-1", channel="ch-1"):
        log.info("in the turn")
        with log_context(call_id="c-9", user=None):
            log.warning("in the call")
        log.info("call done")
    log.info("after")

    outside, turn, call, done, after = lines(logs)
    assert re.fullmatch(rf"{TIMESTAMP} INFO truloop_assistant\.pipeline\.test: outside", outside)
    assert turn.endswith("INFO truloop_assistant.pipeline.test: in the turn channel=ch-1 turn=t-1")
    assert call.endswith(
        "WARNING truloop_assistant.pipeline.test: in the call channel=ch-1 turn=t-1 call=c-9"
    )
    assert done.endswith("call done channel=ch-1 turn=t-1")
    assert after.endswith(": after")
    assert all(re.match(TIMESTAMP, line) for line in lines(logs))
    assert current_context() == {}


def test_json_lines_are_one_object_each_with_the_context(logs: io.StringIO) -> None:
    configure_logging("INFO", "json", stream=logs)
    log = logging.getLogger("truloop_assistant.agent.test")

    with log_context(channel="ch-1", turn_id="t-1", call_id="c-1"):
        log.info("tool %s sent", "calendar.getEvents", extra={"attempt": 2})
        try:
            raise RuntimeError("boom\nsecond line")
        except RuntimeError:
            log.exception("tool failed")

    first, second = (json.loads(line) for line in lines(logs))
    assert re.fullmatch(TIMESTAMP, first.pop("ts"))
    assert first == {
        "level": "INFO",
        "logger": "truloop_assistant.agent.test",
        "message": "tool calendar.getEvents sent",
        "channel": "ch-1",
        "turn_id": "t-1",
        "call_id": "c-1",
        "attempt": 2,
    }
    assert second["level"] == "ERROR" and second["message"] == "tool failed"
    assert "RuntimeError: boom" in second["exc"] and second["turn_id"] == "t-1"


async def test_each_task_logs_with_its_own_turn(logs: io.StringIO) -> None:
    configure_logging("INFO", "json", stream=logs)
    log = logging.getLogger("truloop_assistant.pipeline.test")
    both_started = asyncio.Barrier(2)

    async def turn(channel: str) -> None:
        with log_context(channel=channel, turn_id=f"turn-{channel}"):
            await both_started.wait()  # the two turns interleave from here on
            log.info("step")
            await asyncio.create_task(child())  # tasks started inside the block carry its fields

    async def child() -> None:
        await asyncio.sleep(0)
        log.info("child")

    await asyncio.gather(turn("a"), turn("b"))

    entries = [json.loads(line) for line in lines(logs)]
    assert sorted((e["message"], e["channel"], e["turn_id"]) for e in entries) == [
        ("child", "a", "turn-a"),
        ("child", "b", "turn-b"),
        ("step", "a", "turn-a"),
        ("step", "b", "turn-b"),
    ]


def test_library_noise_only_at_debug(logs: io.StringIO) -> None:
    configure_logging("INFO", "text", stream=logs)
    for name in ("bm25s", "saq", "httpx", "httpx2"):
        library = logging.getLogger(name)
        library.setLevel(logging.DEBUG)  # as bm25s does when it is imported
        library.debug("index built")
        library.info("job done")
        library.warning("%s warns", name)
    logging.getLogger("truloop_assistant.test").info("ours")

    assert [line.split(" ", 1)[1] for line in lines(logs)] == [
        "WARNING bm25s: bm25s warns",
        "WARNING saq: saq warns",
        "WARNING httpx: httpx warns",
        "WARNING httpx2: httpx2 warns",
        "INFO truloop_assistant.test: ours",
    ]

    logs.truncate(0)
    logs.seek(0)
    configure_logging("DEBUG", "text", stream=logs)
    logging.getLogger("saq").info("job done")
    assert [line.split(" ", 1)[1] for line in lines(logs)] == ["INFO saq: job done"]


def test_configuring_again_replaces_only_its_own_handler(logs: io.StringIO) -> None:
    other = logging.NullHandler()
    logging.getLogger().addHandler(other)
    try:
        configure_logging("INFO", "text", stream=io.StringIO())
        configure_logging("WARNING", "text", stream=logs)
        ours = [h for h in logging.getLogger().handlers if h.get_name() == HANDLER_NAME]
        assert len(ours) == 1 and other in logging.getLogger().handlers
        logging.getLogger("truloop_assistant.test").info("hidden")
        logging.getLogger("truloop_assistant.test").warning("shown")
        assert [line.rsplit(": ", 1)[1] for line in lines(logs)] == ["shown"]
    finally:
        logging.getLogger().removeHandler(other)


def test_log_settings_are_checked_and_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRULOOP_LOG_LEVEL", "verbose")
    with pytest.raises(ConfigError, match="TRULOOP_LOG_LEVEL: 'verbose' is not a log level: use DEBUG"):
        load_log_settings()
    monkeypatch.setenv("TRULOOP_LOG_LEVEL", "warn")
    monkeypatch.setenv("TRULOOP_LOG_FORMAT", "xml")
    with pytest.raises(ConfigError, match="TRULOOP_LOG_FORMAT: 'xml' is not a log format: use text or json"):
        load_settings(channel="local", jwt_secret=SECRET)
    monkeypatch.setenv("TRULOOP_LOG_FORMAT", "JSON")
    settings = load_log_settings()
    assert (settings.log_level, settings.log_format) == ("WARNING", "json")


def test_log_settings_are_read_from_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRULOOP_LOG_LEVEL", raising=False)
    monkeypatch.delenv("TRULOOP_LOG_FORMAT", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("TRULOOP_LOG_LEVEL=debug\nTRULOOP_LOG_FORMAT=json\n")

    settings = load_log_settings()

    assert (settings.log_level, settings.log_format) == ("DEBUG", "json")


def test_a_bad_level_stops_a_command_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    (tmp_path / ".env").write_text("TRULOOP_LOG_LEVEL=loud\n")

    proc = subprocess.run(
        [sys.executable, "-m", "truloop_assistant.cli", "users", "import", "users.json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "truloop-assistant: invalid settings: TRULOOP_LOG_LEVEL: 'loud' is not a log level: "
        "use DEBUG, INFO, WARNING, ERROR, CRITICAL"
    ]


def test_lines_inside_a_span_carry_its_trace_and_span_ids_as_in_its_traceparent(logs: io.StringIO) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    tracer = TracerProvider().get_tracer("test")
    log = logging.getLogger("truloop_assistant.agent.test")
    for fmt in ("text", "json"):
        logs.seek(0)
        logs.truncate()
        configure_logging("INFO", fmt, stream=logs)
        log.info("outside")
        with tracer.start_as_current_span("turn"), log_context(turn_id="t-1"):
            carrier: dict[str, str] = {}
            TraceContextTextMapPropagator().inject(carrier)
            _, trace_id, span_id, _ = carrier["traceparent"].split("-")
            log.info("inside")
        outside, inside = lines(logs)
        if fmt == "text":
            assert "trace_id" not in outside and "span_id" not in outside
            assert inside.endswith(f": inside turn=t-1 trace_id={trace_id} span_id={span_id}")
        else:
            assert "trace_id" not in json.loads(outside)
            entry = json.loads(inside)
            assert (entry["turn_id"], entry["trace_id"], entry["span_id"]) == ("t-1", trace_id, span_id)


def test_with_tracing_off_lines_carry_no_trace_ids(logs: io.StringIO) -> None:
    from opentelemetry import trace

    configure_logging("INFO", "json", stream=logs)
    with trace.NoOpTracer().start_as_current_span("turn"):  # what a tracer is with tracing off
        logging.getLogger("truloop_assistant.agent.test").info("inside")
    [entry] = [json.loads(line) for line in lines(logs)]
    assert "trace_id" not in entry and "span_id" not in entry


class Kept(logging.Handler):
    """Keeps the records it is given, with the :func:`log_context` fields where each was made."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(ContextFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_every_line_a_turn_logs_about_its_conversation_carries_the_channel(start_server: Any) -> None:
    kept = Kept()
    package = logging.getLogger("truloop_assistant")
    level = package.level
    package.addHandler(kept)
    package.setLevel(logging.DEBUG)
    channel = "ch-logged-7"
    try:
        async with start_server() as h:  # the offline model
            h.sendbird.refused_channels[channel] = 503  # a delivery that fails, and is tried again
            await h.user_says("지금 몇 시야", channel=channel)
            failures = keys.outbox_failures(keys.conversation_tag(channel))
            await eventually(lambda: h.redis.exists(failures), timeout=30, what="a delivery failed")
            del h.sendbird.refused_channels[channel]
            await h.replies(1, channel=channel, timeout=40)
            await h.idle()
            # A group message without a mention, and one that is a re-delivery.
            group = ["jeff", "mina", BOT]
            await h.user_says("점심?", channel=channel, members=group, message_id=5)
            await h.user_says("점심?", channel=channel, members=group, message_id=5)
            await h.idle()
    finally:
        package.removeHandler(kept)
        package.setLevel(level)

    about = [r for r in kept.records if channel in r.getMessage()]
    assert len(about) >= 3, [r.getMessage() for r in kept.records]
    unmarked = [
        f"{r.name}: {r.getMessage()}"
        for r in about
        if getattr(r, "log_context", {}).get("channel") != channel
    ]
    assert unmarked == []
