"""The FastAPI application: routes, the one place errors become HTTP, and the lifespan."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from . import tracing
from .api import (
    admin,
    approvals,
    calls,
    dev_channel,
    device_protocol,
    guest_page,
    health,
    me,
    stop,
    tool_declarations,
    tool_message,
    twilio_webhook,
    webhooks,
)
from .api.docs import mount_docs
from .config import Settings, get_settings, load_settings
from .errors import AppError, first_problem
from .runtime import collector
from .services import Services

if TYPE_CHECKING:
    # Not imported by the API: the model and the agent are the worker's (see ``create_app``).
    from pydantic_ai.models import Model

    from .agent.agents import MemberAgent

log = logging.getLogger(__name__)


def serve_app() -> FastAPI:
    """The app ``serve`` runs in each of its processes (which run no model: its strings are only read)."""
    return create_app(load_settings(build_models=False), settle_collector=True)


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def create_app(
    settings: Settings | None = None,
    *,
    embedded_worker: bool = False,
    worker_concurrency: int = 8,
    model: Model | None = None,
    agent: MemberAgent | None = None,
    settle_collector: bool = False,
    dev_routes: bool = False,
) -> FastAPI:
    """Build the app. ``embedded_worker`` also consumes the queue in this process (dev and tests);
    ``settle_collector`` sets the process's garbage collector for serving (:mod:`.runtime.collector`),
    once the app has started: only for a process that runs this one app until it exits.
    ``dev_routes`` mounts ``/dev`` (the local channel's page and API, which mints device tokens for
    anyone): only ``truloop-assistant dev`` sets it, never ``serve``."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services.create(settings)
        if settle_collector:
            collector.settle()
        app.state.services = services
        worker_task = None
        if embedded_worker:
            # Here, not at the top: the worker (agent, model clients, tools) is no part of the API's
            # import path, so `serve` starts without loading it.
            from .runtime.queue_worker import build_worker
            from .runtime.scanners import run_scanners

            worker = build_worker(
                services.queue.queue,
                services.drainer(model=model, agent=agent),
                concurrency=worker_concurrency,
                embedded=True,
                background=partial(run_scanners, services),
            )
            app.state.worker = worker
            worker_task = asyncio.create_task(worker.start(), name="embedded-worker")
        try:
            yield
        finally:
            if worker_task is not None:
                await app.state.worker.stop()
                worker_task.cancel()
                with suppress(asyncio.CancelledError):
                    await worker_task
            await services.aclose()

    app = FastAPI(
        title="truloop-assistant",
        version="0.1.0",
        description="Agent server for a chat assistant that lives in Sendbird channels.",
        lifespan=lifespan,
        docs_url=None,  # served by mount_docs, without a CDN
        redoc_url=None,
        openapi_url="/openapi.json" if settings.api_docs else None,
    )
    if settings.api_docs:
        mount_docs(app)
    # The dev server runs its worker in this process too: one service then.
    if tracing.configure("truloop-assistant" if embedded_worker else "truloop-assistant-api"):
        tracing.instrument_app(app)
    app.include_router(webhooks.router)
    app.include_router(twilio_webhook.router)
    app.include_router(tool_message.router)
    app.include_router(tool_declarations.router)
    app.include_router(calls.router)
    app.include_router(device_protocol.router)
    app.include_router(me.router)
    app.include_router(approvals.router)
    app.include_router(stop.router)
    app.include_router(admin.router)
    app.include_router(health.router)
    app.include_router(guest_page.router)
    if settings.metrics_port is None:
        app.include_router(health.metrics_router)
    if dev_routes:
        app.include_router(dev_channel.router)

    @app.exception_handler(AppError)
    async def app_error(request: Request, exc: AppError) -> JSONResponse:
        return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RedisError)
    async def redis_error(request: Request, exc: RedisError) -> JSONResponse:
        log.error("Redis error on %s %s: %s", request.method, request.url.path, exc)
        body = error_body("unavailable", "the server's storage is unavailable; retry in a moment")
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body("invalid_request", first_problem(exc.errors())), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code)

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        # The client went away (or was cut off for sending its body too slowly): nobody to answer.
        log.info("client left before its request was read: %s %s", request.method, request.url.path)
        return JSONResponse(
            error_body("client_disconnected", "the request was not read whole"), status_code=400
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(error_body("internal_error", "something went wrong on our side"), status_code=500)

    return app
