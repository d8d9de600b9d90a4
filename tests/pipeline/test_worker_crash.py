"""A worker process killed mid-turn: another worker takes the job and the user gets one answer."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from typing import Any

import httpx

from tests.fakes.llm import FakeLLM
from tests.support import API_TOKEN, JWT_SECRET, idle, serve, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.config import load_settings
from truloop_assistant.embedded_redis import free_port


def worker_process(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "truloop_assistant.cli", "worker", "--concurrency", "4"],
        env=env,
        stdout=subprocess.DEVNULL,
    )


async def test_sigkilled_worker_mid_turn_still_gives_exactly_one_answer(
    redis: Any, redis_url: str, sendbird: Any
) -> None:
    llm = FakeLLM(hold=1)  # the first model request hangs: the worker dies while waiting on it
    llm_port, api_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")},
        "TRULOOP_REDIS_URL": redis_url,
        "TRULOOP_CHANNEL": "sendbird",
        "TRULOOP_SENDBIRD_APP_ID": "test-app",
        "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
        "TRULOOP_SENDBIRD_API_URL": sendbird.url,
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_QUEUE_NAME": "crash",
        "TRULOOP_WORKER_HEARTBEAT_S": "2",
        "TRULOOP_MODEL": "openai-chat:fake-model",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
        "OPENAI_API_KEY": "fake",
    }
    settings = load_settings(
        **{k.removeprefix("TRULOOP_").lower(): v for k, v in env.items() if k.startswith("TRULOOP_")}
    )
    first = second = None
    try:
        async with (
            serve(llm.app(), llm_port),
            serve(create_app(settings), api_port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{api_port}") as http,
        ):
            first = worker_process(env)
            body = webhook_payload("hello after a crash", message_id=4242, channel="crash-1")
            raw = __import__("json").dumps(body).encode()
            r = await http.post(
                "/api/v1/webhooks/sendbird", content=raw, headers={"x-sendbird-signature": sign(raw)}
            )
            assert r.json() == {"status": "queued"}

            async with asyncio.timeout(30):
                await llm.request_seen.wait()  # the first worker is mid-turn
            first.send_signal(signal.SIGKILL)
            first.wait()
            second = worker_process(env)

            [answer] = await sendbird.wait_count(1, "crash-1", timeout=45)
            assert answer.text == "answer to: hello after a crash"
            await idle(redis, queue="crash", timeout=30)
            assert len(sendbird.messages) == 1
            assert len(llm.requests) == 2  # the dead worker's attempt and the one that answered
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
