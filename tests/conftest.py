"""Test setup: a real Redis server, the real app served over HTTP, and a fake Sendbird."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.fakes.sendbird import FakeSendbird, SentMessage
from tests.support import API_TOKEN, serve, served, sign, webhook_payload
from truloop_assistant.agent.agents import MemberAgent
from truloop_assistant.auth import issue_token
from truloop_assistant.config import Settings, load_settings
from truloop_assistant.embedded_redis import RedisServer, free_port

models.ALLOW_MODEL_REQUESTS = False

JWT_SECRET = "test-secret-0123456789abcdef-0123456789"
BOT = "truloop-assistant"


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


@dataclass
class Harness:
    """The running server, and what a test does with it: send webhooks, answer calls, read the channel."""

    http: httpx.AsyncClient
    sendbird: FakeSendbird
    settings: Settings
    redis: Redis
    _message_ids: Iterator[int]

    async def user_says(
        self, text: str, *, user: str = "jeff", channel: str = "ch-1", message_id: int | None = None
    ) -> httpx.Response:
        payload = webhook_payload(
            text, user=user, channel=channel, message_id=message_id or next(self._message_ids)
        )
        return await self.post_webhook(payload)

    async def post_webhook(
        self, payload: dict[str, Any] | bytes, *, signature: str | None = None
    ) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        sig = signature if signature is not None else sign(body)
        return await self.http.post(
            "/api/v1/webhooks/sendbird",
            content=body,
            headers={"content-type": "application/json", "x-sendbird-signature": sig},
        )

    async def answer(
        self,
        call_id: str,
        *,
        result: Any = None,
        error: dict[str, Any] | None = None,
        user: str = "jeff",
        token: str | None = None,
    ) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": call_id}
        if error is not None:
            body["error"] = error
        else:
            body["result"] = result
        return await self.post_tool_message(
            json.dumps(body).encode(), token=token or issue_token(JWT_SECRET, user)
        )

    async def post_tool_message(self, body: bytes, *, token: str | None) -> httpx.Response:
        headers = {"content-type": "application/json"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return await self.http.post("/api/v1/agent/tool-message", content=body, headers=headers)

    async def rpc_requests(self, n: int, channel: str = "ch-1") -> list[dict[str, Any]]:
        """Wait for n agent-rpc messages in the channel and return their JSON-RPC requests."""
        await self.sendbird.wait_for(
            lambda msgs: sum(1 for m in msgs if m.is_rpc and m.channel_url == channel) >= n
        )
        return [m.rpc for m in self.sendbird.in_channel(channel) if m.is_rpc]

    async def replies(self, n: int, channel: str = "ch-1", *, timeout: float = 10.0) -> list[SentMessage]:
        """Wait for n plain text answers in the channel."""
        await self.sendbird.wait_for(
            lambda msgs: sum(1 for m in msgs if not m.is_rpc and m.channel_url == channel) >= n,
            timeout=timeout,
        )
        return [m for m in self.sendbird.in_channel(channel) if not m.is_rpc]


def make_settings(redis_url: str, sendbird_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "channel": "sendbird",
        "sendbird_app_id": "test-app",
        "sendbird_api_token": API_TOKEN,
        "sendbird_api_url": sendbird_url,
        "sendbird_bot_user_id": BOT,
        "jwt_secret": JWT_SECRET,
        "queue_name": "test",
    }
    values.update(overrides)
    return load_settings(**values)


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
