"""Five messages of one person in a row: the worker's CPU when they are one turn, against five turns.

The drain and the turn runner run in this process (as the worker builds them: ``tests.factories``, the
local channel), on a throwaway Redis, with a model that answers at once. Each round pushes five
messages of one person into a fresh conversation's inbox and drains it: once as they are (the inbox
hands them out together, one turn), once marked undecided with no audience look-up, which the inbox
never gathers and the drain runs as turns of their own (five turns, as before turns gathered them).
The CPU is this process's (``time.process_time``) over the drains alone; Redis's own (the pushes
included, the same in both) is counted apart.

    .venv/bin/python -m benchmarks.bursts [--rounds 30] [--messages 5]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from benchmarks.harness import redis_under_test
from tests.factories import make_drainer, make_runner
from tests.support import make_settings
from truloop_assistant.store.inbox import MessageEvent

WORDS = ["meet tomorrow at 3", "actually 4", "call it design review", "in the big room", "bring the slides"]


def answering() -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Done: design review tomorrow at 4 in the big room.")])

    return FunctionModel(answer)


async def measure(gathered: bool, args: argparse.Namespace) -> dict[str, float]:
    """CPU ms of this process and of Redis per burst of ``args.messages`` messages, and turns run."""
    async with redis_under_test("standalone") as under_test:
        redis = Redis.from_url(under_test.url)
        settings = make_settings(under_test.url, "http://127.0.0.1:9", channel="local")
        drainer = make_drainer(redis, settings, runner=make_runner(redis, settings, model=answering()))

        async def pushed(channel: str) -> str:
            """The burst in the inbox (the API's work, not counted); the drain's owner."""
            owner = None
            for i in range(args.messages):
                event = MessageEvent(
                    message_id=f"{channel}-{i}",
                    user_id="jeff",
                    text=WORDS[i % len(WORDS)],
                    undecided=not gathered,
                )
                _, made = await drainer.inbox.push(channel, event)
                owner = owner or made
            assert owner is not None
            return owner

        for i in range(3):  # warm-up: imports, connections, the scripts loaded
            channel = f"warm-{gathered}-{i}"
            await drainer.drain(channel, await pushed(channel))
        cpu, redis_cpu = 0.0, await _redis_cpu_s(redis)
        for i in range(args.rounds):
            channel = f"burst-{gathered}-{i}"
            owner = await pushed(channel)
            started = time.process_time()
            await drainer.drain(channel, owner)
            cpu += time.process_time() - started
        redis_cpu = await _redis_cpu_s(redis) - redis_cpu
        turns = len(await drainer.ledger.turns(f"burst-{gathered}-0"))
        await redis.aclose()
    return {"cpu_ms": cpu * 1000 / args.rounds, "redis_ms": redis_cpu * 1000 / args.rounds, "turns": turns}


async def _redis_cpu_s(redis: Redis) -> float:
    info: dict[str, Any] = await redis.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--messages", type=int, default=5)
    args = parser.parse_args()
    for gathered in (True, False):
        figures = asyncio.run(measure(gathered, args))
        print(
            f"{'one turn  ' if gathered else 'five turns'}: {figures['turns']:.0f} turn(s) per burst of "
            f"{args.messages}; worker CPU {figures['cpu_ms']:.1f} ms, Redis CPU {figures['redis_ms']:.1f} ms"
            " per burst"
        )


if __name__ == "__main__":
    main()
