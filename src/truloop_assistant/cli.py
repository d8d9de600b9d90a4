"""``truloop-assistant``: serve the API, run a worker, or run everything locally with ``dev``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import sys
from collections.abc import Sequence

from .commands import eval as eval_command
from .commands import kb as kb_command
from .commands import sendbird as sendbird_command
from .commands import users as users_command
from .config import ConfigError, Settings, load_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="truloop-assistant", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="HTTP worker processes")

    worker = sub.add_parser("worker", help="consume queued turns and resumes")
    worker.add_argument("--concurrency", type=int, default=10, help="turns run at once")

    dev = sub.add_parser("dev", help="API + worker in one process, local channel, offline model")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)

    sendbird_command.add_parser(sub)
    users_command.add_parser(sub)
    kb_command.add_parser(sub)
    eval_command.add_parser(sub)

    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("TRULOOP_LOG_LEVEL", "INFO"), format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "worker":
            return asyncio.run(_worker(load_settings(), args.concurrency))
        if args.command == "sendbird":
            return sendbird_command.run(args)
        if args.command == "users":
            return users_command.run(args, _offline_settings(model="offline"))
        if args.command == "kb":
            return kb_command.run(args)
        if args.command == "eval":
            return eval_command.run(args, _offline_settings())
        return _dev(args)
    except ConfigError as exc:
        print(f"truloop-assistant: {exc}", file=sys.stderr)
        return 2


def _offline_settings(**overrides: str) -> Settings:
    """Settings for commands that only touch Redis: no channel or token checks apply to them.

    ``model="offline"`` for commands that never ask a model, so a broken ``TRULOOP_MODEL`` does not stop them.
    """
    return load_settings(channel="local", jwt_secret=secrets.token_urlsafe(32), **overrides)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .api.http_limits import LimitedHttpToolsProtocol

    load_settings()  # fail here, with a readable message, rather than inside every HTTP worker
    uvicorn.run(
        "truloop_assistant.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        proxy_headers=True,
        http=LimitedHttpToolsProtocol,
        log_level=os.environ.get("TRULOOP_LOG_LEVEL", "INFO").lower(),
    )
    return 0


async def _worker(settings: Settings, concurrency: int) -> int:
    from .pipeline.worker import build_worker
    from .services import Services

    services = Services.create(settings)
    try:
        worker = build_worker(
            services.queue.queue,
            services.drainer(),
            concurrency=concurrency,
            background=services.scanners,
        )
        await worker.start()
    finally:
        await services.aclose()
    return 0


def _dev(args: argparse.Namespace) -> int:
    import uvicorn

    from .api.http_limits import LimitedHttpToolsProtocol
    from .app import create_app
    from .backends.users import SAMPLE_USERS_FILE, load_users_file
    from .embedded_redis import RedisServer

    redis_server = None
    redis_url = os.environ.get("TRULOOP_REDIS_URL")
    if not redis_url or not _reachable(redis_url):
        redis_server = RedisServer().start()
        redis_url = redis_server.url
        print(f"started an embedded Redis at {redis_url}")
    settings = load_settings(
        channel="local",
        redis_url=redis_url,
        jwt_secret=os.environ.get("TRULOOP_JWT_SECRET") or secrets.token_urlsafe(32),
    )
    users_file = settings.users_file or str(SAMPLE_USERS_FILE)
    imported = asyncio.run(users_command.import_users(settings.redis_url, load_users_file(users_file)))
    base = f"http://{args.host}:{args.port}"
    print(
        f"""
truloop-assistant dev server — model: {settings.model}, channel: local
  user directory:        {imported} users from {users_file} (try user_id jeff or mina)
  chat in the browser:   {base}/dev
  or with curl:
    curl -s -X POST {base}/dev/api/channels/demo/messages -H 'content-type: application/json' \\
         -d '{{"user_id":"jeff","message":"이번 주 일정 알려줘"}}'
    curl -s {base}/dev/api/channels/demo/messages
  API docs:              {base}/docs
""",
        flush=True,
    )
    # uvicorn re-raises the signal that stopped it; make SIGTERM an exception so cleanup runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.run(
            create_app(settings, embedded_worker=True),
            host=args.host,
            port=args.port,
            http=LimitedHttpToolsProtocol,
        )
    finally:
        if redis_server is not None:
            redis_server.stop()
    return 0


def _reachable(redis_url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(redis_url, socket_connect_timeout=1, socket_timeout=1).ping())
    except redis.RedisError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
