"""Redis restarted under load (AOF on, as in docker-compose): every turn is answered once, and the
worker says that Redis went and came back in a few lines, without a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.pipeline.workers import Cluster, cluster
from tests.support import idle, sign, webhook_payload
from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.redis_client import connect

CHANNELS = 4
OUTAGE_S = 3.0
SEND_EVERY_S = 0.1
RECORD = re.compile(r"^\S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) (\S+): ")


class Log:
    """A worker's log lines as it writes them (read all along, so that a full pipe never blocks it)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def reading(self, proc: asyncio.subprocess.Process) -> AsyncIterator[Log]:
        async def read() -> None:
            assert proc.stderr is not None
            while line := await proc.stderr.readline():
                self.lines.append(line.decode(errors="replace").rstrip("\n"))
                self._changed.set()

        task = asyncio.create_task(read())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait_for(self, text: str, *, after: int = 0, timeout: float = 30.0) -> None:
        async with asyncio.timeout(timeout):
            while not any(text in line for line in self.lines[after:]):
                self._changed.clear()
                await self._changed.wait()


async def send(c: Cluster, text: str, *, channel: str, message_id: int, user: str) -> None:
    """Deliver a message as Sendbird does: re-sent until the server takes it (a 503 during the outage)."""
    body = json.dumps(webhook_payload(text, channel=channel, message_id=message_id, user=user)).encode()
    while True:
        r = await c.http.post(
            "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
        )
        if r.status_code != 503:
            assert r.json()["status"] in ("queued", "duplicate"), r.text
            return
        await asyncio.sleep(0.25)


async def test_a_redis_restart_under_load_answers_every_turn_once_and_logs_a_few_lines(
    tmp_path: Path, sendbird: FakeSendbird
) -> None:
    llm = FakeLLM(delay_s=0.3)
    with RedisServer(appendonly=True, data_dir=str(tmp_path / "redis")) as server:
        async with cluster(server.url, sendbird, llm, queue="restart") as c:
            proc = await c.start_worker()
            async with Log().reading(proc) as log:
                await log.wait_for("worker started")
                sent: list[str] = []
                senders: set[asyncio.Task[None]] = set()
                stop_sending = asyncio.Event()

                async def load() -> None:
                    n = 0
                    while not stop_sending.is_set():
                        text = f"message {n}"
                        sent.append(text)
                        senders.add(
                            asyncio.create_task(
                                send(c, text, channel=f"restart-{n}", message_id=9000 + n, user=f"user-{n}")
                            )
                        )
                        n += 1
                        await asyncio.sleep(SEND_EVERY_S)

                loader = asyncio.create_task(load())
                await asyncio.sleep(1.0)
                before = len(log.lines)
                await asyncio.to_thread(server.stop)  # SIGTERM: what `docker compose restart redis` does
                await asyncio.sleep(OUTAGE_S)
                await asyncio.to_thread(server.start)
                await asyncio.sleep(1.0)
                stop_sending.set()
                await loader
                await asyncio.gather(*senders)

                await sendbird.wait_for(lambda msgs: len(msgs) >= len(sent), timeout=60)
                redis = connect(server.url)
                try:
                    await idle(redis, queue="restart", timeout=30)
                finally:
                    await redis.aclose()
                await log.wait_for("Redis is back", after=before)
                outage = log.lines[before:]

            answers = sorted(m.text for m in sendbird.messages)
            assert answers == sorted(f"answer to: {text}" for text in sent)
            print(f"{len(outage)} lines since Redis stopped:", *outage, sep="\n")
            tracebacks = [line for line in outage if line.startswith("Traceback")]
            records = [m for line in outage if (m := RECORD.match(line)) and m.group(1) != "INFO"]
            assert not tracebacks, "\n".join(outage)
            # One line per component that uses Redis (the queue, the runtime, the pipeline, the
            # Sendbird pacer, the agent's stop marks), and the queue's reconnections may flap once or
            # twice.
            assert len(records) <= 7, "\n".join(outage)
