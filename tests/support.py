"""Helpers shared by the tests and the benchmarks: serving an app, signing webhooks."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

import uvicorn

API_TOKEN = "sendbird-master-token"


@asynccontextmanager
async def serve(app: Any, port: int) -> AsyncIterator[None]:
    """Serve an ASGI app on 127.0.0.1:port inside the test's event loop."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
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


def sign(body: bytes, token: str = API_TOKEN) -> str:
    return hmac.new(token.encode(), body, hashlib.sha256).hexdigest()


def webhook_payload(
    text: str, *, user: str = "jeff", channel: str = "ch-1", message_id: int = 1
) -> dict[str, Any]:
    return {
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
            "created_at": 1540798555343,
            "data": "",
        },
        "channel": {"name": "assistant", "channel_url": channel, "custom_type": "", "is_distinct": True},
        "sdk": "JavaScript",
        "app_id": "test-app",
    }


class _Fake(Protocol):
    url: str

    def app(self) -> Any: ...


F = TypeVar("F", bound=_Fake)


@asynccontextmanager
async def served(fake: F) -> AsyncIterator[F]:
    """Serve a fake outside service on a free 127.0.0.1 port; ``fake.url`` is where it answers."""
    from truloop_assistant.embedded_redis import free_port

    port = free_port()
    async with serve(fake.app(), port):
        fake.url = f"http://127.0.0.1:{port}"
        yield fake
