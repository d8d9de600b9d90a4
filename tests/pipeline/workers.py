"""Real worker processes for crash tests: an API in the test's loop, workers as subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, JWT_SECRET, serve, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.config import load_settings
from truloop_assistant.local.embedded_redis import free_port


@dataclass
class Cluster:
    """The API over HTTP, a fake model provider, and the worker processes started so far."""

    http: httpx.AsyncClient
    env: dict[str, str]
    workers: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def start_worker(self, *, concurrency: int | None = 4) -> asyncio.subprocess.Process:
        """A ``truloop-assistant worker`` process (``None``: its default concurrency); its log lines
        are readable from ``stderr``."""
        options = [] if concurrency is None else ["--concurrency", str(concurrency)]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "truloop_assistant.cli", "worker", *options,
            env=self.env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        self.workers.append(proc)
        return proc

    @staticmethod
    async def kill(proc: asyncio.subprocess.Process) -> None:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()

    @staticmethod
    async def logged(proc: asyncio.subprocess.Process, text: str, *, timeout: float = 30.0) -> None:
        """Wait until the worker logs a line containing ``text``."""
        assert proc.stderr is not None
        async with asyncio.timeout(timeout):
            while line := await proc.stderr.readline():
                if text in line.decode(errors="replace"):
                    return
        raise AssertionError(f"the worker exited without logging {text!r}")

    async def user_says(self, text: str, *, channel: str, message_id: int, user: str = "jeff") -> None:
        payload = webhook_payload(text, message_id=message_id, channel=channel, user=user)
        body = json.dumps(payload).encode()
        r = await self.http.post(
            "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
        )
        assert r.json() == {"status": "queued"}, r.text

    async def answer(self, call_id: str, result: Any, *, user: str = "jeff") -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": call_id, "result": result}
        headers = {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}"}
        return await self.http.post("/api/v1/agent/tool-message", json=body, headers=headers)


@asynccontextmanager
async def cluster(
    redis_url: str, sendbird: FakeSendbird, llm: FakeLLM, *, queue: str, stream: bool = False
) -> AsyncIterator[Cluster]:
    """Serve the API and ``llm``; worker processes started through the cluster are killed at the end."""
    llm_port, api_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")},
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": sendbird.url,
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_QUEUE_NAME": queue,
        "TRULOOP_WORKER_HEARTBEAT_S": "2",
        "TRULOOP_STREAM": "true" if stream else "false",
        "TRULOOP_MODEL": "openai-chat:fake-model",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
        "OPENAI_API_KEY": "fake",
    }
    # The API in this process never calls the model (the workers do, with the provider key in their env).
    values = {k.removeprefix("TRULOOP_").lower(): v for k, v in env.items() if k.startswith("TRULOOP_")}
    settings = load_settings(**{**values, "model": "offline"})
    async with (
        serve(llm.app(), llm_port),
        serve(create_app(settings), api_port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{api_port}", timeout=30) as http,
    ):
        running = Cluster(http=http, env=env)
        try:
            yield running
        finally:
            for proc in running.workers:
                if proc.returncode is None:
                    proc.terminate()
                    try:
                        async with asyncio.timeout(30):
                            await proc.wait()
                    except TimeoutError:
                        await Cluster.kill(proc)
