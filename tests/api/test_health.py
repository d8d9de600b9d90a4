"""Liveness, readiness, metrics, and the error shape of unknown routes."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support import make_settings, serve
from truloop_assistant.app import create_app
from truloop_assistant.local.embedded_redis import free_port


async def test_health_ready_and_metrics(start_server: Any) -> None:
    async with start_server() as h:
        assert (await h.http.get("/healthz")).json() == {"status": "ok"}
        assert (await h.http.get("/readyz")).json() == {"status": "ready"}
        await h.user_says("hello")
        await h.replies(1)
        metrics = (await h.http.get("/metrics")).text
        assert 'truloop_webhooks_total{outcome="queued"}' in metrics
        r = await h.http.get("/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        r = await h.http.get("/api/v1/agent/tool-message")
        assert r.status_code == 405 and "error" in r.json()


async def test_readyz_is_503_when_redis_is_unreachable(sendbird: Any) -> None:
    settings = make_settings(f"redis://127.0.0.1:{free_port()}/0", sendbird.url)
    port = free_port()
    async with (
        serve(create_app(settings), port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
    ):
        assert (await http.get("/healthz")).status_code == 200
        r = await http.get("/readyz")
        assert r.status_code == 503 and r.json()["error"]["code"] == "redis_unreachable"


async def test_metrics_are_not_on_the_api_port_when_they_have_a_port_of_their_own(start_server: Any) -> None:
    async with start_server(metrics_port=free_port()) as h:
        r = await h.http.get("/metrics")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert (await h.http.get("/readyz")).json() == {"status": "ready"}
