"""`truloop-assistant dev` on a laptop: no Redis, no keys — the README's curl session works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from truloop_assistant.embedded_redis import free_port


@pytest.fixture
def dev_server() -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "truloop_assistant.cli", "dev", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            proc.kill()
            pytest.fail(f"dev server did not start:\n{proc.stdout.read() if proc.stdout else ''}")
        yield base
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert "started an embedded Redis" in out
    assert f"{base}/dev" in out  # it tells you what to do next


def wait_for(base: str, predicate: Any, channel: str = "demo") -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        messages = httpx.get(f"{base}/dev/api/channels/{channel}/messages").json()["messages"]
        if predicate(messages):
            return messages
        time.sleep(0.1)
    raise AssertionError(f"timed out; messages: {messages}")


def test_readme_curl_session_completes_a_calendar_turn(dev_server: str) -> None:
    base = dev_server
    r = httpx.post(
        f"{base}/dev/api/channels/demo/messages", json={"user_id": "jeff", "message": "이번 주 일정 알려줘"}
    )
    assert r.status_code == 202 and r.json()["status"] == "queued"

    messages = wait_for(base, lambda ms: any(m["custom_type"] == "agent-rpc" for m in ms))
    assert messages[0]["user_id"] == "jeff" and messages[0]["message"] == "이번 주 일정 알려줘"
    rpc_message = next(m for m in messages if m["custom_type"] == "agent-rpc")
    rpc = json.loads(rpc_message["data"])
    assert rpc["method"] == "calendar.getEvents"

    token = httpx.post(f"{base}/dev/api/token", json={"user_id": "jeff"}).json()["token"]
    start = rpc["params"]["startDate"][:10]
    event = {
        "id": "e1",
        "title": "팀 미팅",
        "start": {"dateTime": f"{start}T10:00:00+09:00"},
        "end": {"dateTime": f"{start}T11:00:00+09:00"},
    }
    r = httpx.post(
        f"{base}/api/v1/agent/tool-message",
        headers={"authorization": f"Bearer {token}"},
        json={"jsonrpc": "2.0", "id": rpc["id"], "result": {"events": [event]}},
    )
    assert r.status_code == 202 and r.json() == {"status": "resuming"}

    messages = wait_for(
        base, lambda ms: ms[-1]["user_id"] == "truloop-assistant" and ms[-1]["custom_type"] == ""
    )
    assert "팀 미팅" in messages[-1]["message"]
    assert "truloop-assistant" in httpx.get(f"{base}/dev").text
