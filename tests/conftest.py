"""Test setup: a real Redis server, the real app served over HTTP, and a fake Sendbird."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.fakes.sendbird import FakeSendbird
from tests.support import Harness, make_settings, serve, served
from truloop_assistant.agent.agents import MemberAgent
from truloop_assistant.embedded_redis import RedisServer, free_port

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("TRULOOP_TEST_REDIS_URL")
    if url:
        yield url
        return
    with RedisServer() as server:
        yield server.url


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
async def sendbird() -> AsyncIterator[FakeSendbird]:
    async with served(FakeSendbird()) as fake:
        yield fake


StartServer = Callable[..., Any]


@pytest.fixture
async def directory(redis: Redis) -> Any:
    """The bundled sample user directory (jeff, mina, ...) loaded into the test Redis."""
    from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file

    users = RedisUserDirectory(redis)
    await users.import_users(load_users_file(SAMPLE_USERS_FILE))
    return users


@pytest.fixture
async def start_server(redis: Redis, redis_url: str, sendbird: FakeSendbird) -> AsyncIterator[StartServer]:
    """``async with start_server(model=..., agent=..., **settings) as h:`` runs API + worker over HTTP."""
    from truloop_assistant.app import create_app

    @asynccontextmanager
    async def start(
        *, model: Any = None, agent: MemberAgent | None = None, **overrides: Any
    ) -> AsyncIterator[Harness]:
        settings = make_settings(redis_url, sendbird.url, **overrides)  # type: ignore[attr-defined]
        app = create_app(settings, embedded_worker=True, model=model, agent=agent)
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            yield Harness(
                http=http,
                sendbird=sendbird,
                settings=settings,
                redis=redis,
                _message_ids=iter(range(1000, 10**9)),
            )

    yield start
