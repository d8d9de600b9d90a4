"""Liveness, readiness and metrics (``metrics_router``: on the API port unless ``TRULOOP_METRICS_PORT``
moves it to a port of its own)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from ..metrics import exposition
from .budget import redis_budget
from .deps import RedisDep

router = APIRouter(tags=["ops"])
metrics_router = APIRouter(tags=["ops"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(redis: RedisDep) -> JSONResponse:
    """Ready to serve: Redis answers."""
    try:
        async with redis_budget():
            await redis.ping()
    except Exception:
        return JSONResponse(
            {"error": {"code": "redis_unreachable", "message": "Redis does not answer"}}, status_code=503
        )
    return JSONResponse({"status": "ready"})


@metrics_router.get("/metrics")
async def metrics() -> Response:
    """Prometheus text format (under ``serve --workers N``, the sum of every HTTP process's figures)."""
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)
