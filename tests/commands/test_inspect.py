"""``truloop-assistant inspect CHANNEL_URL``: a conversation's turns and tool calls, with their results."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.pipeline.test_typing import eventually
from tests.support import BOT, CALENDAR_ARGS
from truloop_assistant.operations.inspection import RESULT_SHOWN
from truloop_assistant.store import keys

WEEK = {
    "events": [
        {
            "id": f"e{i}",
            "title": "주간 회의",
            "start": {"dateTime": "2026-11-23T10:00:00+09:00"},
            "end": {"dateTime": "2026-11-23T11:00:00+09:00"},
        }
        for i in range(40)
    ]
}


def clock_then_calendar() -> FunctionModel:
    """Asks the clock, then the phone's calendar, then answers."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if any(p.tool_name == "get_calendar_events" for p in returns):
            return ModelResponse(parts=[TextPart("a busy week")])
        if returns:
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        return ModelResponse(parts=[ToolCallPart("get_current_datetime", {})])

    return FunctionModel(fn)


def inspect(redis_url: str, *args: str) -> str:
    """Run the command as an operator would, against the test's Redis."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    done = subprocess.run(
        [sys.executable, "-m", "truloop_assistant.cli", "inspect", *args],
        env={**clean, "TRULOOP_REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_inspect_shows_each_call_with_a_short_rendering_of_its_result(
    start_server: Any, redis_url: str
) -> None:
    async with start_server(model=clock_then_calendar()) as h:
        await h.user_says("이번 주 일정", channel="week", message_id=700)
        [rpc] = await h.rpc_requests(1, channel="week")
        assert (await h.answer(rpc["id"], result=WEEK)).status_code == 202
        await h.replies(1, channel="week")
        await h.idle()

    lines = inspect(redis_url, "week").splitlines()
    clock = next(i for i, line in enumerate(lines) if "  get_current_datetime  server  success" in line)
    assert lines[clock + 1].startswith('      → {"datetime": "2026-')
    device = next(
        i for i, line in enumerate(lines) if line.startswith(f"    {rpc['id']}  get_calendar_events")
    )
    shown = lines[device + 1]
    assert shown.startswith('      → {"events": [{"id": "e0", "title": "주간 회의", "start": {"dateTime": ')
    assert shown.endswith("… [cut]")  # the ledger kept only the first 2 KB of it
    assert len(shown) == len("      → ") + RESULT_SHOWN + len("… [cut]")

    # --json is the admin endpoint's JSON: the whole kept result.
    [turn] = json.loads(inspect(redis_url, "week", "--json"))["turns"]
    calls = {c["tool"]: c for c in turn["calls"]}
    assert calls["get_current_datetime"]["result"]["timezone"] == "Asia/Seoul"
    kept = calls["get_calendar_events"]
    assert kept["result_cut"] is True and kept["result"].startswith('{"events": [{"id": "e0"')


ESC_TITLE = "\x1b]0;owned\x07\x1b[2J\x9b31mred\u202e"
"""A title that would retitle the operator's terminal, clear it, turn it red (ESC, BEL, C1 CSI) and
show what follows it right to left (a bidirectional override)."""


def two_calendar_calls() -> FunctionModel:
    """Asks the phone's calendar twice at once (the notes carry control characters), then answers."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        notes = ("\x1b[8m hidden", "\x9b2J")
        return ModelResponse(
            parts=[
                ToolCallPart("get_calendar_events", {**CALENDAR_ARGS, "notification_message": n})
                for n in notes
            ]
        )

    return FunctionModel(fn)


async def test_control_characters_in_results_errors_and_arguments_reach_the_terminal_escaped(
    start_server: Any, redis_url: str
) -> None:
    channel, user = "esc\x1b[2J", "mallory\x1b[31m"
    async with start_server(model=two_calendar_calls()) as h:
        await h.user_says("이번 주 일정", channel=channel, user=user, members=[user, "truloop-assistant"])
        first, second = await h.rpc_requests(2, channel=channel)
        events = {"events": [{**WEEK["events"][0], "title": ESC_TITLE}]}
        assert (await h.answer(first["id"], result=events, user=user)).status_code == 202
        error = {"code": -32002, "message": "UserCanceled\x1b[2J\x9b0m"}
        assert (await h.answer(second["id"], error=error, user=user)).status_code == 202
        await h.replies(1, channel=channel)
        await h.idle()

    text = inspect(redis_url, channel)
    assert not any(c in text for c in "\x1b\x07\x9b\u202e")
    assert "\\u001b]0;owned\\u0007\\u001b[2J\\u009b31mred\\u202e" in text  # shown, escaped (as JSON)
    assert "UserCanceled\\x1b[2J\\x9b0m" in text
    assert "conversation esc\\x1b[2J" in text and "mallory\\x1b[31m" in text

    # --json: the same values, every control character a JSON escape.
    raw = inspect(redis_url, channel, "--json")
    assert not any(c in raw for c in "\x1b\x07\x9b\u202e")
    [turn] = json.loads(raw)["turns"]
    assert turn["user_id"] == user
    calls = {c["call_id"]: c for c in turn["calls"]}
    assert calls[first["id"]]["result"]["events"][0]["title"] == ESC_TITLE
    assert calls[first["id"]]["args"]["notification_message"] == "\x1b[8m hidden"
    assert calls[second["id"]]["error"].startswith("UserCanceled\x1b[2J\x9b0m")


async def inspecting(redis_url: str, *args: str) -> str:
    """:func:`inspect` while the server runs (its event loop goes on meanwhile)."""
    return await asyncio.to_thread(inspect, redis_url, *args)


@pytest.mark.parametrize("status", [500, 429])
async def test_an_answer_sendbird_keeps_refusing_shows_as_waiting_with_its_attempts_last_error_and_next_try(
    start_server: Any, redis_url: str, status: int
) -> None:
    async with start_server() as h:  # the offline model
        h.sendbird.refused_channels["down"] = status
        await h.user_says("지금 몇 시야", channel="down")
        failures = keys.outbox_failures(keys.conversation_tag("down"))
        await eventually(
            lambda: _count(h.redis.get(failures), at_least=2), timeout=30, what="two deliveries failed"
        )

        text = await inspecting(redis_url, "down")
        [summary] = [line for line in text.splitlines() if line.startswith("  outbox: ")]
        assert summary.startswith("  outbox: 1 waiting to be delivered, ")
        assert " failed deliveries in a row, next try 20" in summary
        assert any(line.startswith("    answer  ") for line in text.splitlines())
        assert f"status {status}, code 500910: could not send to down: HTTP {status}" in text

        report = json.loads(await inspecting(redis_url, "down", "--json"))
        outbox = report["outbox"]
        [waiting] = outbox["waiting"]
        assert waiting["kind"] == "answer" and waiting["since"].startswith("20")
        assert outbox["failures"] >= 2 and outbox["next_try_at"].startswith("20")
        error = outbox["last_error"]
        assert (error["status"], error["code"]) == (status, 500910)
        assert error["dedup_id"] == waiting["dedup_id"] and error["at"].startswith("20")
        assert report["turns"] and "inbox" in report and "owner" in report  # the fields kept

        # Sendbird takes it again: the answer goes out and nothing waits any more.
        del h.sendbird.refused_channels["down"]
        await h.replies(1, channel="down", timeout=40)
        await h.idle()
    after = json.loads(await inspecting(redis_url, "down", "--json"))["outbox"]
    assert after == {"waiting": [], "failures": 0, "last_error": None, "next_try_at": None}


async def _count(value: Any, *, at_least: int) -> bool:
    raw = await value
    return raw is not None and int(raw) >= at_least


async def test_messages_that_were_not_run_show_as_admission_decisions_with_their_times(
    start_server: Any, redis_url: str
) -> None:
    group = ["jeff", "mina", BOT]
    async with start_server(rate_limit_user="1/minute") as h:
        started = time.time()
        said = await h.user_says("점심 먹을래?", channel="g", members=group, message_id=10)
        assert said.json()["status"] == "ignored"
        assert (await h.user_says("지금 몇 시야", channel="dm", message_id=11)).json()["status"] == "queued"
        again = await h.user_says("지금 몇 시야", channel="dm", message_id=11)  # a re-sent webhook
        assert again.json()["status"] == "duplicate"
        fast = await h.user_says("또 몇 시야", channel="dm", message_id=12)
        assert fast.json()["status"] == "ignored"
        await h.idle()

    group_report = json.loads(await inspecting(redis_url, "g", "--json"))
    [overheard] = group_report["admissions"]
    assert overheard | {"at": None} == {
        "at": None,
        "decision": "not_addressed",
        "user_id": "jeff",
        "message_id": "10",
    }
    dm = json.loads(await inspecting(redis_url, "dm", "--json"))["admissions"]
    assert [(a["decision"], a["message_id"]) for a in dm if a["user_id"] == "jeff"] == [
        ("rate_limited", "12"),
        ("duplicate", "11"),
        ("queued", "11"),
    ]
    for entry in [overheard, *dm]:
        at = datetime.fromisoformat(entry["at"]).timestamp()
        assert started - 1 <= at <= time.time()

    text = await inspecting(redis_url, "dm")
    assert "  admission decisions, newest first: " in text
    [limited] = [line for line in text.splitlines() if "  rate_limited  user jeff  message 12" in line]
    assert limited.startswith("    20") and "over the rate limit" in limited
    assert "  not_addressed  user jeff  message 10  (not for the assistant" in await inspecting(
        redis_url, "g"
    )


async def test_a_conversation_being_answered_shows_its_drain_its_worker_since_when_and_its_lease(
    start_server: Any, redis_url: str
) -> None:
    release = asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await release.wait()
        return ModelResponse(parts=[TextPart("done")])

    async with start_server(model=FunctionModel(slow)) as h:
        before = time.time()
        await h.user_says("안녕", channel="busy")
        noted = keys.drain_note(keys.conversation_tag("busy"))
        await eventually(lambda: h.redis.exists(noted), timeout=10, what="a drain claimed the conversation")

        report = json.loads(await inspecting(redis_url, "busy", "--json"))
        drain = report["drain"]
        assert drain["owner"] == report["owner"] and drain["owner"].startswith("drain:")
        assert drain["worker"] == f"{socket.gethostname()}:{os.getpid()}"
        assert before - 1 <= datetime.fromisoformat(drain["since"]).timestamp() <= time.time()
        assert 0 < drain["lease_expires_in_s"] <= h.settings.worker_heartbeat_s
        assert drain["waiting_for_device"] is False
        [running] = report["inbox"]
        assert running["kind"] == "message" and running["chars"] == 2

        [line] = [x for x in (await inspecting(redis_url, "busy")).splitlines() if x.startswith("  worker: ")]
        assert line.startswith(f"  worker: {drain['owner']} on {drain['worker']}  since 20")
        assert "  lease expires in " in line
        release.set()
        await h.replies(1, channel="busy")
