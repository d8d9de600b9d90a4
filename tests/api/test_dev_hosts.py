"""The dev server started with ``--host ADDRESS`` answers requests to that address too, and no other."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from truloop_assistant.api.dev_hosts import DevHosts


async def hello(request: object) -> PlainTextResponse:
    return PlainTextResponse("hello")


@pytest.mark.parametrize(
    ("bind", "host", "status"),
    [
        ("192.168.1.5", "192.168.1.5:8000", 200),
        ("192.168.1.5", "localhost:8000", 200),
        ("192.168.1.5", "192.168.1.6:8000", 400),
        ("192.168.1.5", "", 400),
        ("::", "[::]:8000", 200),
        ("::", "[::2]:8000", 400),
        ("devbox.lan", "DEVBOX.lan:8000", 200),
        ("127.0.0.1", "devbox.lan:8000", 400),
    ],
)
async def test_the_bound_host_and_loopback_are_answered(bind: str, host: str, status: int) -> None:
    app = DevHosts(Starlette(routes=[Route("/", hello)]), bind_host=bind)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://x") as http:
        r = await http.get("/", headers={"Host": host})
    assert r.status_code == status, r.text
    if status == 400:
        assert r.json()["error"]["code"] == "invalid_host"
