"""How long a declared schema's patterns can hold the server: what a request takes, and the slowest
``/healthz`` answer while it runs (polled every 10 ms, each timed from when it was due).

``declare``
    A ``PUT /api/v1/agent/client-tools`` of one 16 KiB result schema with 357 different costly
    patterns (``\\p{L}{150}\\p{N}{150}z`` and a suffix), then ``--parallel`` (8) others at once.
``answer``
    A phone's 249 KiB answer to a declared tool's call: ``"가" * 85000`` against
    ``\\p{L}{150}\\p{N}{150}z`` (a declaration kept from before patterns were bounded: today's
    server refuses to take it), 249 KiB of a's and b's against ``a.{100}c`` (taken today), and 250
    strings of 999 such characters against it.
``worker``
    The model calls a declared tool whose ``parameters`` hold the 357 patterns (kept from before),
    then with a 249 KiB argument against ``a.{100}c``; meanwhile another person says hello: how long
    their answer takes.

The server (API and an embedded worker, one event loop: a stall of either shows in ``/healthz``),
the fake Sendbird and the model run in this process, on a throwaway Redis. Figures to read, never
assertions.

    .venv/bin/python -m benchmarks.schema_patterns [--scenario declare|answer|worker|all]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TypeVar

import httpx
from pydantic_ai.models.function import FunctionModel

from benchmarks.harness import redis_under_test
from tests.api.test_client_tools import declare, tool
from tests.api.test_declared_tool_patterns import (
    COSTLY,
    SLOW,
    calls_once,
    costly_schema,
    guessing,
    keep_before_the_bounds,
    reading,
    unicode_answer,
)
from tests.fakes.sendbird import FakeSendbird
from tests.support import JWT_SECRET, Harness, make_settings, serve, served
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.redis_client import connect

T = TypeVar("T")
POLL_S = 0.01


@asynccontextmanager
async def server(model: FunctionModel | None = None) -> AsyncIterator[Harness]:
    """The app with its worker in this event loop, the fake Sendbird and a throwaway Redis."""
    async with redis_under_test("standalone") as redis, served(FakeSendbird()) as sendbird:
        settings = make_settings(redis.url, sendbird.url, queue_name="bench-patterns")
        app = create_app(settings, embedded_worker=True, model=model)
        port = free_port()
        client = connect(redis.url)
        try:
            async with (
                serve(app, port),
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600) as http,
            ):
                yield Harness(http, sendbird, settings, client, iter(range(1000, 10**9)))
        finally:
            await client.aclose()


@asynccontextmanager
async def health(h: Harness) -> AsyncIterator[list[float]]:
    """How long each ``/healthz`` took, polled every ``POLL_S`` until the block ends: from when it was
    due (``POLL_S`` after the one before) to its answer, so that a stall while the poller slept
    counts too."""
    took: list[float] = []
    done = asyncio.Event()

    async def poll() -> None:
        due = time.perf_counter()
        while not done.is_set():
            await h.http.get("/healthz")
            answered = time.perf_counter()
            took.append(answered - due)
            due = answered + POLL_S
            await asyncio.sleep(POLL_S)

    task = asyncio.create_task(poll())
    await asyncio.sleep(POLL_S * 3)  # a few answers before the request: the poller is running
    try:
        yield took
    finally:
        done.set()
        await task


async def timed(request: Awaitable[T]) -> tuple[T, float]:
    began = time.perf_counter()
    response = await request
    return response, time.perf_counter() - began


def row(what: str, outcome: str, took: float, healthz: list[float]) -> None:
    print(f"  {what:52} {outcome:12} {took:7.2f} s   slowest /healthz {max(healthz, default=0):6.2f} s")


async def declaring(parallel: int) -> None:
    body = {"tools": [tool(result=costly_schema())]}
    async with server() as h:
        async with health(h) as healthz:
            r, took = await timed(declare(h, body))
        row("PUT of 357 costly patterns", str(r.status_code), took, healthz)
        bodies = [{"tools": [tool(result=costly_schema(salt=salt))]} for salt in range(1, parallel + 1)]
        async with health(h) as healthz:
            answers, took = await timed(asyncio.gather(*(declare(h, body) for body in bodies)))
        statuses = ",".join(sorted({str(r.status_code) for r in answers}))
        row(f"{parallel} such PUTs at once", statuses, took, healthz)


async def answering() -> None:
    token = issue_token(JWT_SECRET, "jeff")
    async with server(calls_once("read_code")) as h:
        result = {"type": "object", "properties": {"code": {"type": "string", "pattern": COSTLY}}}
        await keep_before_the_bounds(h, reading(result=result))
        await h.user_says("go")
        [rpc] = await h.rpc_requests(1)
        async with health(h) as healthz:
            body = unicode_answer(rpc["id"], {"code": "가" * 85_000})
            r, took = await timed(h.post_tool_message(body, token=token))
        row('249 KiB "가" against \\p{L}{150}\\p{N}{150}z (kept)', str(r.status_code), took, healthz)
    async with server(calls_once("read_code")) as h:
        assert (await declare(h, {"tools": [reading()]})).status_code == 200
        await h.user_says("go")
        [rpc] = await h.rpc_requests(1)
        for what, answer in [
            ("249 KiB of a's and b's against a.{100}c", {"code": guessing(249 * 1024)}),
            ("250 strings of 999 a's and b's against a.{100}c", {"codes": [guessing(999)] * 250}),
        ]:
            async with health(h) as healthz:
                r, took = await timed(h.answer(rpc["id"], result=answer))
            row(what, str(r.status_code), took, healthz)


async def working() -> None:
    for what, declared_parameters, args in [
        ("357 costly patterns in parameters (kept)", costly_schema(), {}),
        (
            "a 249 KiB argument against a.{100}c",
            {"type": "object", "properties": {"code": {"type": "string", "pattern": SLOW}}},
            {"code": guessing(249 * 1024)},
        ),
    ]:
        async with server(calls_once("read_code", args)) as h:
            await keep_before_the_bounds(h, reading(parameters=declared_parameters))
            async with health(h) as healthz:
                await h.user_says("go")
                began = time.perf_counter()
                await h.user_says("hello", user="mina", channel="ch-2")
                await h.replies(1, channel="ch-2", timeout=600)
                took = time.perf_counter() - began
                [reply] = await h.replies(1, timeout=600)
            row(f"{what}: another person's answer", reply.text[:12], took, healthz)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenario", choices=["declare", "answer", "worker", "all"], default="all")
    parser.add_argument("--parallel", type=int, default=8)
    args = parser.parse_args()

    async def run() -> None:
        if args.scenario in ("declare", "all"):
            print("declare")
            await declaring(args.parallel)
        if args.scenario in ("answer", "all"):
            print("answer")
            await answering()
        if args.scenario in ("worker", "all"):
            print("worker")
            await working()

    asyncio.run(run())


if __name__ == "__main__":
    main()
