"""The app ``serve`` runs: the local channel's /dev routes (which mint device tokens) are never part of it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.support import API_TOKEN, JWT_SECRET, serve
from truloop_assistant.app import serve_app
from truloop_assistant.config import get_settings
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.runtime import collector


@pytest.fixture
def local_channel_env(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> Iterator[None]:
    """``TRULOOP_CHANNEL=local`` with a real secret and Redis, read as ``serve``'s processes read it."""
    for name, value in {
        "TRULOOP_CHANNEL": "local",
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_REDIS_URL": redis_url,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(collector, "settle", lambda: None)  # the test process's collector stays as it is
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("local_channel_env")
async def test_the_served_app_mints_no_device_token_even_with_the_local_channel() -> None:
    port = free_port()
    async with serve(serve_app(), port), httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        assert (await http.get("/readyz")).json() == {"status": "ready"}
        minted = await http.post("/dev/api/token", json={"user_id": "jeff"})
        assert minted.status_code == 404 and "token" not in minted.json(), minted.text
        assert minted.json()["error"]["code"] == "not_found"
        for path in ("/dev", "/dev/api/users", "/dev/api/channels/demo/messages"):
            assert (await http.get(path)).status_code == 404, path


SERVED_AND_ASKED = """
import asyncio, sys

import httpx, uvicorn

from truloop_assistant.app import serve_app
from truloop_assistant.runtime import collector

collector.settle = lambda: None


async def main() -> None:
    server = uvicorn.Server(uvicorn.Config(serve_app(), host="127.0.0.1", port=PORT, log_level="warning"))
    server.install_signal_handlers = lambda: None
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    async with httpx.AsyncClient(base_url="http://127.0.0.1:PORT") as http:
        for path in ("/healthz", "/readyz"):
            assert (await http.get(path)).status_code == 200, path
    server.should_exit = True
    await task


asyncio.run(main())
print("\\n".join(sorted(sys.modules)))
"""
WORKERS_ONLY = (
    "pydantic_ai.models",  # the model clients (and the rest of pydantic-ai, which imports them)
    "openai",
    "anthropic",
    "google.genai",
    "mcp",
    "truloop_assistant.agent",
    "truloop_assistant.tools",
    "truloop_assistant.backends.knowledge",
    "truloop_assistant.runtime.queue_worker",
    "bm25s",
    "kiwipiepy",
)
"""Modules only a worker needs: the agent, the model clients, the tools and the knowledge index."""


def test_serve_answers_without_loading_the_agent_or_the_model_clients(redis_url: str) -> None:
    """``serve``'s processes start in about the time their web libraries take to import: the app they
    run, from its import to its first answers, loads nothing that only the worker uses."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")} | {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_JWT_SECRET": JWT_SECRET,
    }
    code = SERVED_AND_ASKED.replace("PORT", str(free_port()))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert "fastapi" in loaded and "truloop_assistant.api.webhooks" in loaded, "not the served app"
    unwanted = [m for m in loaded if any(m == w or m.startswith(f"{w}.") for w in WORKERS_ONLY)]
    assert not unwanted, f"serve loads what only the worker needs: {unwanted[:20]}"
