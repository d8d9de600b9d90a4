"""The app ``serve`` runs: the local channel's /dev routes (which mint device tokens) are never part of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import API_TOKEN, JWT_SECRET, serve, sign, webhook_payload
from truloop_assistant.app import serve_app
from truloop_assistant.config import VALID_MODELS, get_settings
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
import json, os, signal, sys, threading, time

import httpx

from truloop_assistant.cli import main

PORT, BODY, SIGNATURE, OUT = sys.argv[1], sys.argv[2].encode(), sys.argv[3], sys.argv[4]


def ask() -> None:
    # Once serve answers: its probes, then one signed webhook; what the process has loaded by then.
    found = {}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=10) as http:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.01)
            found["probes"] = [http.get(path).status_code for path in ("/healthz", "/readyz")]
            answer = http.post(
                "/api/v1/webhooks/sendbird", content=BODY, headers={"x-sendbird-signature": SIGNATURE}
            )
            found["webhook"] = [answer.status_code, answer.json()]
    except Exception as exc:
        found["error"] = repr(exc)
    found["loaded"] = sorted(sys.modules)
    with open(OUT, "w") as out:
        json.dump(found, out)
    os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=ask, daemon=True).start()
sys.exit(main(["serve", "--port", PORT]))
"""
WORKERS_ONLY = (
    "pydantic_ai",  # the agent framework and its model clients
    "openai",
    "anthropic",
    "google.genai",
    "mcp",
    "truloop_assistant.agent",
    "truloop_assistant.tools",
    "truloop_assistant.backends.knowledge",
    "truloop_assistant.backends.places",
    "truloop_assistant.backends.events",
    "truloop_assistant.runtime.queue_worker",
    "bm25s",
    "kiwipiepy",
    "markdown_it",
)
"""Modules only a worker needs: the agent, pydantic-ai and the model clients, the tools and their
backends, the knowledge index (and the Markdown parser it reads documents with)."""


def serve_env(redis_url: str, **extra: str) -> dict[str, str]:
    """A deployment's environment for ``serve``: Sendbird (an application nobody answers for), Redis and
    a secret."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")} | {
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": f"http://127.0.0.1:{free_port()}",
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_LOG_LEVEL": "WARNING",
        **extra,
    }


def served_and_asked(env: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    """Run ``truloop-assistant serve``, ask its probes and post it one signed chat message; what it
    answered, and every module its process had loaded by then."""
    body = json.dumps(webhook_payload("what's on this week?", channel=f"ch-{time.time_ns()}")).encode()
    out = tmp_path / "served.json"
    args = [str(free_port()), body.decode(), sign(body), str(out)]
    done = subprocess.run(
        [sys.executable, "-c", SERVED_AND_ASKED, *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and out.exists(), done.stderr
    found: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in found, f"{found['error']}\n{done.stderr}"
    assert found["probes"] == [200, 200]
    assert found["webhook"] == [200, {"status": "queued"}], found["webhook"]
    assert "fastapi" in found["loaded"] and "truloop_assistant.api.webhooks" in found["loaded"]
    return found


def workers_only(loaded: list[str]) -> list[str]:
    return [m for m in loaded if any(m == w or m.startswith(f"{w}.") for w in WORKERS_ONLY)]


def test_serve_answers_without_loading_the_agent_or_the_model_clients(redis_url: str, tmp_path: Path) -> None:
    """``serve``'s processes start in about the time their web libraries take to import: from its start
    to its first chat message queued, serve loads nothing that only the worker uses."""
    found = served_and_asked(serve_env(redis_url), tmp_path)
    unwanted = workers_only(found["loaded"])
    assert not unwanted, f"serve loads what only the worker needs: {unwanted[:20]}"


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "openai-chat:gpt-4o-mini"])
def test_serve_with_a_provider_model_loads_neither_pydantic_ai_nor_the_providers_client(
    redis_url: str, tmp_path: Path, model: str
) -> None:
    """The worker builds the model; serve only checks the model strings, without their providers."""
    env = serve_env(
        redis_url,
        TRULOOP_MODEL=model,
        TRULOOP_FALLBACK_MODELS="anthropic:claude-sonnet-4-5",
        OPENAI_API_KEY="sk-anything",
        ANTHROPIC_API_KEY="sk-ant-anything",
    )
    found = served_and_asked(env, tmp_path)
    unwanted = workers_only(found["loaded"])
    assert not unwanted, f"serve with {model} loads what only the worker needs: {unwanted[:20]}"


REFUSED = """
import sys

from truloop_assistant.cli import main

code = main(["serve"])
print(" ".join(sorted({m.split(".")[0] for m in sys.modules} & {"pydantic_ai", "openai", "anthropic"})))
sys.exit(code)
"""


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("TRULOOP_MODEL", "gpt-4o-mini", "no provider prefix"),
        (
            "TRULOOP_MODEL",
            "google-gla:gemini-2.5-flash",
            "unknown model provider 'google-gla' (now called google:)",
        ),
        ("TRULOOP_MODEL", "opanai:gpt-4o-mini", "unknown model provider 'opanai'"),
        ("TRULOOP_MODEL", "openai-chat:", "no model name after openai-chat:"),
        ("TRULOOP_FALLBACK_MODELS", "anthropic:claude-sonnet-4-5, gtp:4o", "unknown model provider 'gtp'"),
    ],
)
def test_serve_refuses_an_invalid_model_string_at_start_naming_the_variable(
    redis_url: str, tmp_path: Path, variable: str, value: str, problem: str
) -> None:
    env = serve_env(redis_url, **{variable: value}, OPENAI_API_KEY="sk-a", ANTHROPIC_API_KEY="sk-ant-a")
    done = subprocess.run(
        [sys.executable, "-c", REFUSED], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    refused = value.split(", ")[-1]
    assert done.stderr.strip().splitlines() == [
        f"truloop-assistant: invalid settings: {variable}={refused!r}: {problem}; {VALID_MODELS}"
    ]
    assert done.stdout.split() == [], "serve imported a provider to refuse a model string"
