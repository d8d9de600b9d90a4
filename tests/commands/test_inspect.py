"""``truloop-assistant inspect CHANNEL_URL``: a conversation's turns and tool calls, with their results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import CALENDAR_ARGS
from truloop_assistant.operations.inspection import RESULT_SHOWN

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
