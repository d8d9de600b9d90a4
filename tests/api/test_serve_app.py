"""The app ``serve`` runs: the local channel's /dev routes (which mint device tokens) are never part of it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import JWT_SECRET, serve
from truloop_assistant.app import serve_app
from truloop_assistant.config import get_settings
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.runtime import collector


@pytest.fixture
def local_channel_env(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> Iterator[None]:
    """``TRULOOP_CHANNEL=local`` with a real secret and Redis, read as ``serve``'s processes read it."""
    for name, value in {
        "TRULOOP_CHANNEL": "local",
        "TRULOOP_JWT_SECRET": JWT_SECRET,
        "TRULOOP_REDIS_URL": redis_url,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(collector, "settle", lambda: None)  # the test process's collector stays as it is
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("local_channel_env")
async def test_the_served_app_mints_no_device_token_even_with_the_local_channel() -> None:
    port = free_port()
    async with serve(serve_app(), port), httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        assert (await http.get("/readyz")).json() == {"status": "ready"}
        minted = await http.post("/dev/api/token", json={"user_id": "jeff"})
        assert minted.status_code == 404 and "token" not in minted.json(), minted.text
        assert minted.json()["error"]["code"] == "not_found"
        for path in ("/dev", "/dev/api/users", "/dev/api/channels/demo/messages"):
            assert (await http.get(path)).status_code == 404, path
