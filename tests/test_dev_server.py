"""`truloop-assistant dev` on a laptop: no Redis, no keys — the README's curl session works."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import running_dev_server


@pytest.fixture
def dev_server() -> Iterator[str]:
    with running_dev_server() as server:
        yield server.base
    assert "started an embedded Redis" in server.output
    assert f"{server.base}/dev" in server.output  # it tells you what to do next


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_curl_session() -> str:
    """The bash block of the README's tour, "Try it with curl", exactly as a reader pastes it."""
    text = README.read_text()
    section = text[text.index("## Try it with curl") :]
    return section[
        section.index("```bash\n") + len("```bash\n") : section.index("```\n", section.index("```bash"))
    ]


def test_readme_curl_session_works_when_pasted_again_and_again(dev_server: str) -> None:
    script = readme_curl_session().replace("BASE=http://localhost:8000", f"BASE={dev_server}")
    assert f"BASE={dev_server}" in script
    for _ in range(2):  # a fresh channel each time: pasting it again works as well
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.strip().splitlines()
        assert lines[0].startswith("the phone is asked: call_")
        assert json.loads(lines[1]) == {"status": "resuming"}
        [state] = json.loads(lines[2]).values()
        assert state == {"state": "answered", "user_id": "jeff"}  # the request's message says so too
        assert "팀 미팅" in lines[-1]  # the assistant's answer names the event the phone returned
    assert "truloop-assistant" in httpx.get(f"{dev_server}/dev").text


def test_waiting_for_a_message_returns_as_soon_as_it_arrives(dev_server: str) -> None:
    quiet = httpx.get(f"{dev_server}/dev/api/channels/silent/messages?wait=0.5", timeout=5)
    assert quiet.status_code == 200 and quiet.json()["messages"] == []
    r = httpx.post(f"{dev_server}/dev/api/channels/waits/messages", json={"user_id": "mina", "message": "hi"})
    mid = r.json()["message_id"]
    answered = httpx.get(f"{dev_server}/dev/api/channels/waits/messages?after={mid}&wait=10", timeout=15)
    assert [m["user_id"] for m in answered.json()["messages"]][:1] == ["truloop-assistant"]
    too_long = httpx.get(f"{dev_server}/dev/api/channels/waits/messages?wait=31", timeout=5)
    assert too_long.status_code == 400 and "wait" in too_long.json()["error"]["message"]  # at most 30 s


def test_only_requests_addressed_to_loopback_are_answered(dev_server: str) -> None:
    port = dev_server.rpartition(":")[2]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
        assert httpx.get(f"{dev_server}/dev/api/users", headers={"Host": host}).status_code == 200, host
    # A page elsewhere reaching the dev server under a name of its own that resolves to 127.0.0.1.
    for host in (f"rebind.example:{port}", "127.0.0.1.nip.io", "localhost.example.com"):
        r = httpx.post(f"{dev_server}/dev/api/token", json={"user_id": "jeff"}, headers={"Host": host})
        assert r.status_code == 400, (host, r.text)
        assert r.json()["error"]["code"] == "invalid_host" and "token" not in r.json()
    assert httpx.get(f"{dev_server}/dev", headers={"Host": "rebind.example"}).status_code == 400
