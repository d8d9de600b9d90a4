"""Webhook acknowledgement latency while many conversations are in flight, and turns per second.

Runs the real processes — `truloop-assistant serve` and `truloop-assistant worker` — against a
throwaway Redis, with a local fake Sendbird and a local fake OpenAI-compatible model that takes
``--think-ms`` per answer. N conversations each send ``--turns`` messages, one after the other's
answer, all conversations at once. With ``--device`` every turn first asks the phone for the
calendar (the benchmark answers as the phone would), so each turn pauses and resumes. At the end
it reports what Redis holds per conversation. Everything stays on 127.0.0.1.

    .venv/bin/python -m benchmarks.webhook_load [--conversations 50] [--turns 6] [--think-ms 200] [--device]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

import httpx
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, idle, serve, sign, webhook_payload
from truloop_assistant.auth import issue_token
from truloop_assistant.embedded_redis import RedisServer, free_port

SECRET = "benchmark-secret-0123456789-abcdefghij"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


CALENDAR = {
    "notification_message": "…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-29T23:59:59+09:00",
}


def calendar_first(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Ask the phone for the calendar, then answer (the default answer) once it has."""
    if messages[-1]["role"] == "tool":
        return None
    call = {"id": "call_cal", "type": "function",
            "function": {"name": "get_calendar_events", "arguments": json.dumps(CALENDAR)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


async def conversation(
    http: httpx.AsyncClient,
    fake: FakeSendbird,
    index: int,
    turns: int,
    acks: list[tuple[int, float]],
    device: bool,
) -> None:
    channel = f"load-{index}"
    await asyncio.sleep(random.uniform(0, 1))  # conversations start over the first second
    for turn in range(turns):
        body = json.dumps(
            webhook_payload(
                f"message {turn}", user=f"user-{index}", channel=channel, message_id=index * 1000 + turn + 1
            )
        ).encode()
        start = time.perf_counter()
        r = await http.post(
            "/api/v1/webhooks/sendbird", content=body, headers={"x-sendbird-signature": sign(body)}
        )
        acks.append((turn, time.perf_counter() - start))
        assert r.json() == {"status": "queued"}, r.text
        if device:
            rpc = (await fake.wait_count(2 * turn + 1, channel, timeout=120))[2 * turn]
            assert rpc.is_rpc, rpc.body
            token = issue_token(SECRET, f"user-{index}")
            answer = {"jsonrpc": "2.0", "id": rpc.rpc["id"], "result": {"events": []}}
            r = await http.post(
                "/api/v1/agent/tool-message", json=answer, headers={"authorization": f"Bearer {token}"}
            )
            assert r.status_code == 202, r.text
            await fake.wait_count(2 * turn + 2, channel, timeout=120)
        else:
            await fake.wait_count(turn + 1, channel, timeout=120)


async def wait_ready(url: str) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(300):
            try:
                if (await http.get(f"{url}/readyz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not become ready")


async def footprint(redis_url: str) -> tuple[int, dict[str, int]]:
    """Redis's used memory, and the bytes each conversation's keys take (``MEMORY USAGE``)."""
    redis = Redis.from_url(redis_url)
    try:
        per_conversation: dict[str, int] = {}
        async for key in redis.scan_iter(match="ta:{c:*", count=1000):
            tag = key.decode().split("}", 1)[0]
            per_conversation[tag] = per_conversation.get(tag, 0) + int(await redis.memory_usage(key) or 0)
        info = await redis.info("memory")
        return int(info["used_memory"]), per_conversation
    finally:
        await redis.aclose()


async def main(conversations: int, turns: int, think_ms: int, concurrency: int, device: bool) -> None:
    fake = FakeSendbird()
    llm = FakeLLM(delay_s=think_ms / 1000, script=calendar_first if device else None)
    sb_port, llm_port, api_port = free_port(), free_port(), free_port()
    with RedisServer() as redis_server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")},
            "TRULOOP_REDIS_URL": redis_server.url,
            "TRULOOP_CHANNEL": "sendbird",
            "TRULOOP_SENDBIRD_APP_ID": "bench",
            "TRULOOP_SENDBIRD_API_TOKEN": API_TOKEN,
            "TRULOOP_SENDBIRD_API_URL": f"http://127.0.0.1:{sb_port}",
            "TRULOOP_JWT_SECRET": SECRET,
            "TRULOOP_MODEL": "openai-chat:fake-model",
            "TRULOOP_LOG_LEVEL": "WARNING",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
            "OPENAI_API_KEY": "fake",
        }
        cli = [sys.executable, "-m", "truloop_assistant.cli"]
        procs = [
            subprocess.Popen([*cli, "serve", "--port", str(api_port)], env=env),  # noqa: ASYNC220
            subprocess.Popen([*cli, "worker", "--concurrency", str(concurrency)], env=env),  # noqa: ASYNC220
        ]
        try:
            used_before, _ = await footprint(redis_server.url)
            async with serve(fake.app(), sb_port), serve(llm.app(), llm_port):
                base = f"http://127.0.0.1:{api_port}"
                await wait_ready(base)
                limits = httpx.Limits(max_connections=conversations)
                async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as http:
                    acks: list[tuple[int, float]] = []
                    start = time.perf_counter()
                    await asyncio.gather(
                        *(conversation(http, fake, i, turns, acks, device) for i in range(conversations))
                    )
                    wall = time.perf_counter() - start
                    await idle(Redis.from_url(redis_server.url), queue="truloop", timeout=60)
            used_after, per_conversation = await footprint(redis_server.url)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=60)

    total = conversations * turns
    per_turn = 2 if device else 1
    all_ms = [a * 1000 for _, a in acks]
    warm_ms = [a * 1000 for turn, a in acks if turn > 0]
    print(f"conversations in flight      {conversations} ({turns} turns each, one after another)")
    print(f"model think time             {think_ms} ms; worker concurrency {concurrency}")
    print(f"webhook ack, all             {_stats(all_ms)}")
    print(f"webhook ack, after 1st turn  {_stats(warm_ms)}")
    rate = total / wall
    expected = {f"load-{i}": [f"answer to: message {t}" for t in range(turns)] for i in range(conversations)}
    got: dict[str, list[str]] = {}
    for m in fake.messages:
        if not m.is_rpc:
            got.setdefault(m.channel_url, []).append(m.text)
    print(f"answers exactly as expected  {got == expected} ({len(fake.messages)} messages shown)")
    print(
        f"model runs                   {len(llm.requests)} for {total} turns ({per_turn} expected per turn)"
    )
    answered = sum(len(v) for v in got.values())
    print(f"turns answered               {answered} of {total} in {wall:.2f} s = {rate:.1f} turns/s")
    ideal = total * think_ms / 1000 / min(concurrency, conversations)
    print(f"model-bound floor            {ideal:.2f} s (the server reaches {ideal / wall:.0%} of it)")
    sizes = sorted(per_conversation.values())
    print(
        f"Redis per conversation       median {statistics.median(sizes) / 1024:.1f} KiB, "
        f"max {sizes[-1] / 1024:.1f} KiB over {len(sizes)} conversations (history included; target < 100 KiB)"
    )
    print(
        f"Redis used memory            {used_before / 2**20:.1f} -> {used_after / 2**20:.1f} MiB "
        f"({(used_after - used_before) / max(1, len(sizes)) / 1024:.1f} KiB per conversation)"
    )


def _stats(ms: list[float]) -> str:
    p50, p99 = statistics.median(ms), percentile(ms, 0.99)
    return f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  max {max(ms):6.2f} ms  (n={len(ms)})"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--think-ms", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--device", action="store_true", help="every turn pauses for the phone's calendar")
    args = parser.parse_args()
    asyncio.run(main(args.conversations, args.turns, args.think_ms, args.concurrency, args.device))
