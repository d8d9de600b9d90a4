"""Tool callbacks from installed entry points, told about every kind of tool call, never in the way."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.mcp_server import CUSTOMERS, CrmServer
from tests.support import JWT_SECRET
from truloop_assistant.auth import issue_token
from truloop_assistant.tools.callbacks import GROUP

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tool-callbacks"

FLAKY = """
import asyncio, time

class Flaky:
    def on_tool_start(self, event):
        raise RuntimeError("the audit service is down")

    async def on_tool_end(self, event):
        await asyncio.sleep(30)

    def on_tool_error(self, event):
        time.sleep(3)
"""


def install(site: Path, name: str, points: dict[str, str]) -> None:
    """What installing a package that declares these entry points leaves on ``sys.path``."""
    dist = site / f"{name}-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = "".join(f"{key} = {value}\n" for key, value in points.items())
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")


@pytest.fixture
def audit_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example package examples/tool-callbacks installed (its entry points), beside a flaky one."""
    site = tmp_path / "site"
    site.mkdir()
    example = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    install(site, "truloop_audit", example["project"]["entry-points"][GROUP])
    (site / "flaky_callbacks.py").write_text(FLAKY)
    install(site, "flaky_callbacks", {"flaky": "flaky_callbacks:Flaky"})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("TRULOOP_AUDIT_FILE", str(audit))
    yield audit
    for module in ("truloop_audit", "flaky_callbacks"):
        sys.modules.pop(module, None)


def plan_model() -> FunctionModel:
    """A server tool and an MCP tool; an MCP tool behind the gate; a device tool; then what came back."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(" | ".join(f"{p.tool_name} {p.outcome}" for p in returns))])
        prompt = str(next(p.content for p in messages[-1].parts if p.part_kind == "user-prompt"))
        calls = {
            "find mina": [("get_current_datetime", {}), ("crm_lookup_customer", {"name": "mina"})],
            "delete c-17": [("crm_delete_customer", {"customer_id": "c-17"})],
            "where am I": [("get_current_location", {"notification_message": "Finding you…"})],
            "my calendar": [
                (
                    "get_calendar_events",
                    {
                        "notification_message": "Checking…",
                        "start_date": "2026-11-23T00:00:00+09:00",
                        "end_date": "2026-11-29T23:59:59+09:00",
                    },
                )
            ],
        }[prompt]
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])

    return FunctionModel(fn)


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def audit_lines(path: Path, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    async with asyncio.timeout(timeout):
        while True:
            lines = read_lines(path)
            if len(lines) >= n:
                return [json.loads(line) for line in lines]
            await asyncio.sleep(0.05)


async def test_callbacks_hear_of_every_kind_of_call_and_a_bad_one_holds_up_nothing(
    start_server: Any, crm: CrmServer, audit_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crm.start()
    caplog.set_level(logging.INFO, logger="truloop_assistant.tools.callbacks")
    async with start_server(model=plan_model(), **crm.settings()) as h:
        await h.user_says("find mina")
        await h.replies(1)  # within the harness's 10 s, though a callback sleeps 30 s on every end

        await h.user_says("delete c-17")
        [ask] = await h.rpc_requests(1)
        assert (await h.answer(ask["id"], result={"confirmed": True})).status_code == 202
        await h.replies(2)

        await h.user_says("my calendar")
        [_, calendar] = await h.rpc_requests(2)
        denied = {
            "code": -32010,
            "message": "PermissionRequired",
            "data": {"requiredPermission": "calendar.read"},
        }
        assert (await h.answer(calendar["id"], error=denied)).status_code == 202
        await h.replies(3)

        # A tool the user's app declared.
        location = {
            "name": "get_current_location",
            "description": "Where the user is",
            "method": "location.get",
            "read_only": True,
        }
        declared = {"tools": [{**location, "parameters": {"type": "object"}}]}
        token = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}
        assert (
            await h.http.put("/api/v1/agent/client-tools", json=declared, headers=token)
        ).status_code == 200
        await h.user_says("where am I")
        [*_, where] = await h.rpc_requests(3)
        assert (await h.answer(where["id"], result={"label": "Seoul"})).status_code == 202
        replies = await h.replies(4)
        assert [r.text for r in replies] == [
            "get_current_datetime success | crm_lookup_customer success",
            "crm_delete_customer success",
            "get_calendar_events failed",
            "get_current_location success",
        ]

        lines = await audit_lines(audit_file, 12)
    by_call: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_call.setdefault(line["call"]["call_id"], []).append(line)
    seen = {
        (events[0]["call"]["tool"], events[0]["call"]["kind"], tuple(e["event"] for e in events))
        for events in by_call.values()
    }
    assert seen == {
        ("get_current_datetime", "server", ("start", "end")),
        ("crm_lookup_customer", "server", ("start", "end")),
        ("crm_delete_customer", "approval", ("start", "end")),
        ("crm_delete_customer", "server", ("start", "end")),
        ("get_calendar_events", "device", ("start", "error")),
        ("get_current_location", "device", ("start", "end")),
    }
    # The records are the ledger's: the JSON-RPC id for device and approval calls, args, status, error.
    sent, answered = by_call[calendar["id"]]
    assert sent["call"]["status"] == "pending"  # told when it went to the phone ...
    assert answered["call"]["status"] == "failed" and "PermissionRequired" in answered["call"]["error"]
    assert answered["call"]["result"] is None  # ... the error is what it ended with
    assert by_call[ask["id"]][0]["call"]["args"] == {"customer_id": "c-17"}

    # on_tool_end gets the result: what a server or MCP tool returned, the device's answer.
    ended = {(e["call"]["tool"], e["call"]["kind"]): e["call"] for e in lines if e["event"] == "end"}
    assert ended["get_current_datetime", "server"]["result"]["timezone"] == "Asia/Seoul"
    assert ended["crm_lookup_customer", "server"]["result"] == CUSTOMERS["c-17"]
    assert ended["crm_delete_customer", "approval"]["result"] == {"confirmed": True}
    assert ended["crm_delete_customer", "server"]["result"] == "deleted c-17"
    assert ended["get_current_location", "device"]["result"] == {"label": "Seoul"}
    assert not any(e["call"]["result_cut"] for e in lines)
    assert all(e["call"]["result"] is None for e in lines if e["event"] == "start")
    assert all(line["user_id"] == "jeff" and line["channel_url"] == "ch-1" for line in lines)

    logged = [r.getMessage() for r in caplog.records]
    assert any("flaky.on_tool_start raised" in m for m in logged)
    assert any("flaky.on_tool_end took over" in m for m in logged)
