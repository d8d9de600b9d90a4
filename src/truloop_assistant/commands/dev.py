"""``truloop-assistant dev``: the API and a worker in one process, the local channel, an embedded Redis
unless ``TRULOOP_REDIS_URL`` names one, and the sample users."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import sys

from .startup import PACKAGE


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dev = subparsers.add_parser("dev", help="API + worker in one process, local channel, offline model")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..api.http_limits import LimitedHttpToolsProtocol
    from ..app import create_app
    from ..backends.users import SAMPLE_USERS_FILE, load_users_file
    from ..config import given_settings, load_settings, masked_url
    from ..local.embedded_redis import RedisServer
    from ..store import keys
    from .doctor import RedisProblem, ping_redis
    from .users import import_users

    given = given_settings()
    settings = load_settings(channel="local", jwt_secret=given.get("jwt_secret") or secrets.token_urlsafe(32))
    redis_server = None
    if given.get("redis_url"):
        try:
            ping_redis(settings.redis_url)
        except RedisProblem as exc:
            where = masked_url(settings.redis_url)
            print(
                f"{PACKAGE}: TRULOOP_REDIS_URL={where}: no usable Redis there ({exc}). "
                "Start Redis at that address, or unset TRULOOP_REDIS_URL (in the environment and .env) "
                "and dev starts an embedded Redis of its own",
                file=sys.stderr,
            )
            return 2
    else:
        try:
            redis_server = RedisServer().start()
        except RuntimeError as exc:  # no redis-server binary, or it would not start
            print(f"{PACKAGE}: {exc}", file=sys.stderr)
            return 2
        settings = settings.model_copy(update={"redis_url": redis_server.url})
        print(f"started an embedded Redis at {redis_server.url}")
    try:
        keys.use_prefix(settings.key_prefix)
        users_file = settings.users_file or str(SAMPLE_USERS_FILE)
        imported = asyncio.run(import_users(settings.redis_url, load_users_file(users_file)))
        base = f"http://{args.host}:{args.port}"
        where = masked_url(settings.redis_url)
        print(
            f"""
truloop-assistant dev server — model: {settings.model}, channel: local, Redis: {where}
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
        uvicorn.run(
            create_app(settings, embedded_worker=True, settle_collector=True),
            host=args.host,
            port=args.port,
            http=LimitedHttpToolsProtocol,
            log_config=None,  # the root logger's handler, set up by main, formats uvicorn's lines too
            log_level=settings.log_level.lower(),
        )
    finally:
        if redis_server is not None:
            redis_server.stop()
    return 0
