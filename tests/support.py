"""Helpers shared by the tests and the benchmarks: serving an app, signing webhooks, the harness.

Tests import helpers from here, never from ``conftest.py`` (which only defines fixtures).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx
import pytest
import uvicorn
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from truloop_assistant.api.http_limits import LimitedHttpToolsProtocol
from truloop_assistant.auth import issue_token
from truloop_assistant.config import Settings, load_settings
from truloop_assistant.store import keys

if TYPE_CHECKING:
    from tests.fakes.sendbird import FakeSendbird, SentMessage

ON_STANDALONE_AND_CLUSTER = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)
"""``pytestmark`` of a module whose tests also run on a real Redis Cluster (see ``conftest``)."""

API_TOKEN = "sendbird-master-token"
CALENDAR_ARGS = {
    "notification_message": "…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-29T23:59:59+09:00",
}
"""The model's arguments for this week's phone calendar."""
JWT_SECRET = "test-secret-0123456789abcdef-0123456789"
BOT = "truloop-assistant"


@asynccontextmanager
async def serve(
    app: Any, port: int, *, http: type[asyncio.Protocol] = LimitedHttpToolsProtocol
) -> AsyncIterator[None]:
    """Serve an ASGI app on 127.0.0.1:port inside the test's event loop, with the server's HTTP limits."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        http=http,
    )
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        await task


async def signed_in_again(user: str, *, since: float, **claims: Any) -> str:
    """A token for ``user`` issued after ``since`` (its ``iat`` is in whole seconds): what an app gets
    from its backend once the user's tokens were revoked then (``DELETE /me``, ``revoke-tokens``)."""
    await asyncio.sleep(max(0.0, int(since) + 1 - time.time()))  # the clock's next second
    return issue_token(JWT_SECRET, user, **claims)


def sign(body: bytes, token: str = API_TOKEN) -> str:
    return hmac.new(token.encode(), body, hashlib.sha256).hexdigest()


def webhook_payload(
    text: str,
    *,
    user: str = "jeff",
    channel: str = "ch-1",
    message_id: int = 1,
    members: list[str] | None = None,
    mentions: list[str] | None = None,
    created_at: int | None = None,
) -> dict[str, Any]:
    """A ``group_channel:message_send`` delivery; by default in a 1:1 channel of ``user`` and the bot,
    sent now (``created_at``: when it was sent, in milliseconds)."""
    everyone = [user, BOT] if members is None else members
    return {
        "members": [{"user_id": m, "nickname": m} for m in everyone],
        "mention_type": "users",
        "mentioned_users": [{"user_id": m, "nickname": m} for m in mentions or []],
        "category": "group_channel:message_send",
        "sender": {"user_id": user, "nickname": user, "profile_url": "", "metadata": {}},
        "silent": False,
        "custom_type": "",
        "type": "MESG",
        "payload": {
            "message_id": message_id,
            "custom_type": "",
            "message": text,
            "translations": {},
            "created_at": int(time.time() * 1000) if created_at is None else created_at,
            "data": "",
        },
        "channel": {"name": "assistant", "channel_url": channel, "custom_type": "", "is_distinct": True},
        "sdk": "JavaScript",
        "app_id": "test-app",
    }


def file_payload(
    url: str,
    *,
    name: str = "photo.jpg",
    media_type: str = "image/jpeg",
    size: int | None = None,
    require_auth: bool = False,
    text: str = "",
    **where: Any,
) -> dict[str, Any]:
    """A ``group_channel:message_send`` of a ``FILE`` message (``tests/fakes/files.py`` says what its
    payload holds and where Sendbird says so); ``text``: the message's caption."""
    payload = webhook_payload(text, **where)
    payload["type"] = "FILE"
    payload["payload"].update(
        url=url, name=name, type=media_type, size=size or 0, require_auth=require_auth, thumbnails=[]
    )
    return payload


class _Fake(Protocol):
    url: str

    def app(self) -> Any: ...


F = TypeVar("F", bound=_Fake)


@asynccontextmanager
async def served(fake: F) -> AsyncIterator[F]:
    """Serve a fake outside service on a free 127.0.0.1 port; ``fake.url`` is where it answers."""
    from truloop_assistant.local.embedded_redis import free_port

    port = free_port()
    async with serve(fake.app(), port):
        fake.url = f"http://127.0.0.1:{port}"
        yield fake


@dataclass
class Harness:
    """The running server, and what a test does with it: send webhooks, answer calls, read the channel."""

    http: httpx.AsyncClient
    sendbird: FakeSendbird
    settings: Settings
    redis: Redis
    _message_ids: Iterator[int]

    async def idle(self, timeout: float = 10.0) -> None:
        """Wait until nothing is queued, running or waiting in any inbox (see :func:`idle`)."""
        await idle(self.redis, queue=self.settings.queue_name, timeout=timeout)

    async def user_says(
        self,
        text: str,
        *,
        user: str = "jeff",
        channel: str = "ch-1",
        message_id: int | None = None,
        members: list[str] | None = None,
        mentions: list[str] | None = None,
    ) -> httpx.Response:
        payload = webhook_payload(
            text,
            user=user,
            channel=channel,
            message_id=message_id or next(self._message_ids),
            members=members,
            mentions=mentions,
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

    async def rpc_requests(
        self, n: int, channel: str = "ch-1", *, timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Wait for n agent-rpc messages in the channel and return their JSON-RPC requests."""
        await self.sendbird.wait_for(
            lambda msgs: sum(1 for m in msgs if m.is_rpc and m.channel_url == channel) >= n, timeout=timeout
        )
        return [m.rpc for m in self.sendbird.in_channel(channel) if m.is_rpc]

    async def replies(self, n: int, channel: str = "ch-1", *, timeout: float = 10.0) -> list[SentMessage]:
        """Wait for n plain text answers in the channel."""
        await self.sendbird.wait_for(
            lambda msgs: sum(1 for m in msgs if not m.is_rpc and m.channel_url == channel) >= n,
            timeout=timeout,
        )
        return [m for m in self.sendbird.in_channel(channel) if not m.is_rpc]

    def texts(self, channel: str) -> list[str]:
        """The plain text messages in the channel so far, oldest first."""
        return [m.text for m in self.sendbird.in_channel(channel) if not m.is_rpc]

    async def each_told_once(self, users: list[str], *, timeout: float = 60.0) -> None:
        """Wait until each of ``users`` has a text in their 1:1 channel with the bot (what was queued
        goes out by the workers' delivery scan), then assert each got exactly one."""

        def told(_: object) -> bool:
            return all(self.texts(self.direct_channel(u) or "") for u in users)

        await self.sendbird.wait_for(told, timeout=timeout)
        await self.idle(timeout=timeout)
        for user in users:
            channel = self.direct_channel(user)
            assert channel is not None and len(self.texts(channel)) == 1, user

    def direct_channel(self, user: str) -> str | None:
        """The bot's 1:1 channel with ``user``, if the server created it on the Platform API."""
        return next(
            (
                url
                for url, channel in self.sendbird.channels.items()
                if sorted(m["user_id"] for m in channel["members"]) == sorted([user, BOT])
            ),
            None,
        )


UNPACED = "GET=1000,POST=1000,PUT=1000,DELETE=1000"
"""Budgets the tests' server keeps to while the fake Sendbird enforces none."""


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
        # The fake Sendbird has no rate limit unless a test enforces a plan's (and the server's with it).
        "sendbird_rates": UNPACED,
        # Whole answers, as the tests written before streaming expect; streaming tests turn it on.
        "stream": False,
    }
    values.update(overrides)
    return load_settings(**values)


async def busy(redis: Redis, *, queue: str) -> list[str]:
    """What the server still has to do: queued, running or retrying jobs, and events in inboxes.

    A drain that only waits for a device's answer (``WAIT_FOR_DEVICE_S``) has nothing to do: it
    counts as idle, with its job, until a push wakes it.
    """
    found = []
    waiting: set[bytes] = set()  # the owners of drains that wait
    async for key in redis.scan_iter(match=f"{keys.PREFIX}:{{c:*}}:owner:waiting", count=1000):
        if (owner := await redis.get(key)) is not None:
            waiting.add(owner)
    # saq keeps every job that has not finished (queued, running, waiting to be retried) here.
    space = keys.queue(queue)
    jobs = await redis.zrange(f"{space}:incomplete", 0, -1)
    waiting_jobs = {f"{space}:job:{space}:".encode() + owner for owner in waiting}
    if count := len([job for job in jobs if job not in waiting_jobs]):
        found.append(f"{count} unfinished job(s)")
    async for key in redis.scan_iter(match=f"{keys.PREFIX}:{{c:*}}:inbox", count=1000):
        if count := await redis.llen(key):
            found.append(f"{count} event(s) in {key.decode()}")
    async for key in redis.scan_iter(match=f"{keys.PREFIX}:{{c:*}}:owner", count=1000):
        if await redis.get(key) not in waiting:
            found.append(f"a drain owns {key.decode()}")
    return found


async def idle(redis: Redis, *, queue: str, timeout: float = 10.0) -> None:
    """Wait until the server is idle: every turn it was given has run to its end (answer or pause).

    After this a test can assert that something did *not* happen (a second answer, a resume that
    must not run) without sleeping and hoping: anything still to come would be in Redis now.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while pending := await busy(redis, queue=queue):
        if loop.time() > deadline:
            raise AssertionError(f"the server is still busy after {timeout:g} s: {'; '.join(pending)}")
        await asyncio.sleep(0.02)


def calendar_model(answer: str = "nothing this week") -> FunctionModel:
    """Ask the phone for this week's calendar; once it answered, say ``answer``."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart(answer)])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    return FunctionModel(fn)


@dataclass
class DevServer:
    """A ``truloop-assistant dev`` process; ``output`` is what it printed, once it stopped."""

    base: str
    output: str = ""


@contextmanager
def logging_restored() -> Iterator[None]:
    """The root logger's level and handlers, and the noisy libraries' levels, put back after the block
    (for tests that call ``configure_logging``)."""
    import logging

    from truloop_assistant.logs import HANDLER_NAME, NOISY_LOGGERS

    root = logging.getLogger()
    saved = (root.level, list(root.handlers), {n: logging.getLogger(n).level for n in NOISY_LOGGERS})
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
            root.removeHandler(handler)
        for handler in saved[1]:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(saved[0])
        for name, level in saved[2].items():
            logging.getLogger(name).setLevel(level)


@contextmanager
def running_dev_server(**settings: str) -> Iterator[DevServer]:
    """``truloop-assistant dev`` in a subprocess (embedded Redis, offline model, no TRULOOP_* set but
    ``settings``, e.g. ``TRULOOP_REDIS_URL``), ready; stopped with Ctrl-C on exit."""
    from truloop_assistant.local.embedded_redis import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")} | settings
    proc = subprocess.Popen(
        [sys.executable, "-m", "truloop_assistant.cli", "dev", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = DevServer(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{server.base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            proc.kill()
            raise AssertionError(f"dev server did not start:\n{proc.stdout.read() if proc.stdout else ''}")
        yield server
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            server.output, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            server.output, _ = proc.communicate()


LOCATION_TOOL: dict[str, Any] = {
    "name": "get_current_location",
    "description": "The user's current location from their phone: latitude, longitude and a place name",
    "method": "location.getCurrent",
    "read_only": True,
    "parameters": {
        "type": "object",
        "properties": {"accuracy": {"type": "string", "enum": ["coarse", "fine"]}},
        "additionalProperties": False,
    },
    "result": {
        "type": "object",
        "required": ["latitude", "longitude"],
        "properties": {
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
            "label": {"type": "string"},
        },
    },
}
"""An app-declared device tool, as the /dev page declares it for its sample."""
