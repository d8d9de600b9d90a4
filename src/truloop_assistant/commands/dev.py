"""``truloop-assistant dev``: the API and a worker in one process, the local channel, an embedded Redis
unless ``TRULOOP_REDIS_URL`` names one, and the sample users.

Its Redis and the secret that signs its device tokens come from the process's environment only
(``TRULOOP_REDIS_URL``, ``TRULOOP_JWT_SECRET``), never from a ``.env``, which may be a deployment's:
else an embedded Redis and a secret made for the run. Its keys are under a prefix of its own
(``DEV_KEY_PREFIX``), and a Redis of the environment that holds anything but ``dev``'s is refused
(:mod:`..local.dev_redis`). It answers only requests addressed to loopback or to its ``--host``
(:mod:`..api.dev_hosts`), and says loudly on stderr when that host is more than loopback."""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import signal
import sys

from .startup import PACKAGE

logger = logging.getLogger("truloop_assistant.cli")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dev = subparsers.add_parser("dev", help="API + worker in one process, local channel, offline model")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..api.dev_hosts import DevHosts, is_loopback
    from ..api.http_limits import LimitedHttpToolsProtocol
    from ..app import create_app
    from ..backends.users import SAMPLE_USERS_FILE, load_users_file
    from ..config import Settings, environment_settings, load_settings, masked_url
    from ..local.dev_redis import FIX, NotDevsRedis, claim
    from ..local.embedded_redis import RedisServer
    from ..store import keys
    from .doctor import RedisProblem, ping_redis
    from .users import import_users

    # Only what the environment itself says: a .env beside it may be a deployment's (its Redis, its secret).
    given = environment_settings()
    settings = load_settings(
        channel="local",
        jwt_secret=given.get("jwt_secret") or secrets.token_urlsafe(32),
        redis_url=given.get("redis_url") or Settings.model_fields["redis_url"].default,
        key_prefix=keys.DEV_KEY_PREFIX,  # never a deployment's keys, whatever TRULOOP_KEY_PREFIX says
        supermemory_legacy_tags=False,  # nor a deployment's memories kept under Supermemory's old tags
        metrics_port=None,  # one process, one port: /metrics stays beside the API
    )
    keys.use_prefix(settings.key_prefix)
    redis_server = None
    if given.get("redis_url"):
        try:
            ping_redis(settings.redis_url)
        except RedisProblem as exc:
            where = masked_url(settings.redis_url)
            print(
                f"{PACKAGE}: TRULOOP_REDIS_URL={where}: no usable Redis there ({exc}). "
                "Start Redis at that address, or unset TRULOOP_REDIS_URL in the environment "
                "and dev starts an embedded Redis of its own",
                file=sys.stderr,
            )
            return 2
        try:
            asyncio.run(claim(settings.redis_url))
        except NotDevsRedis as exc:
            where = masked_url(settings.redis_url)
            print(
                f"{PACKAGE}: TRULOOP_REDIS_URL={where}: dev will not use this Redis: {exc}. {FIX}",
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
    try:
        _announce(
            settings.redis_url, embedded=redis_server is not None, own_secret=not given.get("jwt_secret")
        )
        users_file = settings.users_file or str(SAMPLE_USERS_FILE)
        imported = asyncio.run(import_users(settings.redis_url, load_users_file(users_file)))
        base = f"http://{args.host}:{args.port}"
        if not is_loopback(args.host):
            _warn_beyond_loopback(args.host, base, env_secret=bool(given.get("jwt_secret")))
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
        app = create_app(settings, embedded_worker=True, settle_collector=True, dev_routes=True)
        app.add_middleware(DevHosts, bind_host=args.host)
        uvicorn.run(
            app,
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


def _warn_beyond_loopback(host: str, base: str, *, env_secret: bool) -> None:
    """The warning, on stderr, that ``dev`` is bound to more than this machine."""
    bar = "!" * 78
    signer = (
        "signed with TRULOOP_JWT_SECRET, good wherever that secret is"
        if env_secret
        else "signed with this run's secret"
    )
    print(
        f"""{bar}
{PACKAGE}: WARNING: dev listens on {host}, not only on this machine's loopback.
  Anyone who reaches {base} can chat as its sample users (one an admin) and mint
  24-hour device tokens at /dev/api/token, {signer}.
  Bind --host 127.0.0.1 (the default) unless every machine that can reach it is yours.
{bar}""",
        file=sys.stderr,
        flush=True,
    )


def _announce(redis_url: str, *, embedded: bool, own_secret: bool) -> None:
    """The one line saying which Redis ``dev`` uses and what signs its device tokens."""
    from ..config import given_settings, masked_url

    redis = (
        f"started an embedded Redis at {redis_url}"
        if embedded
        else f"Redis {masked_url(redis_url)} from TRULOOP_REDIS_URL in the environment"
    )
    signer = (
        "device tokens signed with a secret made for this run"
        if own_secret
        else "device tokens signed with TRULOOP_JWT_SECRET from the environment"
    )
    dotenv = given_settings(strict=False)  # the environment's too, but those are used when set
    unused = [
        f"TRULOOP_{name.upper()}"
        for name, ignored in (("redis_url", embedded), ("jwt_secret", own_secret))
        if ignored and name in dotenv
    ]
    note = (
        f" ({' and '.join(unused)} of .env not used: dev takes them from the environment only)"
        if unused
        else ""
    )
    logger.info("dev: %s; %s%s", redis, signer, note)
