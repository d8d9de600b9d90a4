"""``truloop-assistant``: serve the API, run a worker, or run everything locally with ``dev``.

A command imports what it needs when it runs, so ``--help`` and ``--version`` answer at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from .config import Settings
    from .runtime.probe import WorkerHealth

logger = logging.getLogger("truloop_assistant.cli")

PACKAGE = "truloop-assistant"
COMMANDS = {
    "doctor": "check the settings, Redis, the model's key and the Sendbird token, and say what to fix",
    "inspect": "a conversation's recent turns, tool calls, pending calls, inbox and failures",
    "dead-letters": "list, replay or purge the events conversations gave up after their retries",
    "sendbird": "Sendbird administration",
    "users": "manage the built-in user directory",
    "kb": "knowledge base administration",
    "eval": "measure how well a model picks the assistant's tools (accuracy per group of requests)",
    "token": "print a device JWT for a user, signed with TRULOOP_JWT_SECRET (for development and tests)",
}
"""Commands defined in ``commands/<name>.py`` (``-`` in a name is ``_`` in its module's), with their line
in ``--help`` (the module is imported only when its command runs)."""
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
REDIS_BACKOFF_MAX_S = 30.0
DEFAULT_CONCURRENCY = 100
"""Turns one worker process keeps in flight: each mostly waits on the model, so many fit in one core."""


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = next((arg for arg in arguments if not arg.startswith("-")), None)
    args = build_parser(command).parse_args(arguments)

    from .config import ConfigError

    try:
        _configure_logging(doctor=args.command == "doctor")
        if args.command == "serve":
            return _serve(args)
        if args.command == "worker":
            return _run_worker(args)
        if args.command == "dev":
            return _dev(args)
        module = _command_module(args.command)
        if args.command in ("users", "inspect", "dead-letters", "kb"):
            return int(module.run(args, _offline_settings(model="offline")))
        if args.command == "eval":
            return int(module.run(args, _offline_settings()))
        return int(module.run(args))
    except ConfigError as exc:
        print(f"{PACKAGE}: {exc}", file=sys.stderr)
        return 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; of the ``commands/`` modules only ``command``'s is imported (for its options)."""
    parser = argparse.ArgumentParser(
        prog=PACKAGE, description="Serve the API, run a worker, or run everything locally with dev."
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="HTTP worker processes")

    worker = sub.add_parser("worker", help="consume queued turns and resumes")
    worker.add_argument(
        "--concurrency",
        type=_positive,
        default=DEFAULT_CONCURRENCY,
        help=f"turns in flight at once, per process (default {DEFAULT_CONCURRENCY}: turns wait on the model)",
    )
    worker.add_argument(
        "--processes", type=_positive, default=1, help="worker processes to start (and restart if they die)"
    )
    worker.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="P",
        help="serve Prometheus text at http://HOST:P/metrics, liveness at /healthz and readiness at "
        "/readyz (process i of --processes on P+i)",
    )
    worker.add_argument(
        "--metrics-host", default="127.0.0.1", metavar="HOST", help="where --metrics-port listens"
    )
    worker.add_argument(
        "--probe",
        action="store_true",
        help="instead of running a worker, ask the running one's http://HOST:P/healthz (each process's "
        "with --processes); exit 0 when its loop runs, else 1 (a liveness check)",
    )
    worker.add_argument(
        "--ready",
        action="store_true",
        help="with --probe, ask /readyz instead: exit 0 when its loop runs and Redis answers (readiness)",
    )

    dev = sub.add_parser("dev", help="API + worker in one process, local channel, offline model")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)

    for name, help_line in COMMANDS.items():
        if name == command:
            _command_module(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed package's version (read only when asked for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import version

        print(f"{parser.prog} {version(PACKAGE)}")
        parser.exit()


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.commands.{name.replace('-', '_')}")


def _configure_logging(*, doctor: bool) -> None:
    """Log as ``TRULOOP_LOG_LEVEL`` / ``TRULOOP_LOG_FORMAT`` say; ``doctor`` reports a bad value instead."""
    from .config import ConfigError, load_log_settings
    from .logs import configure_logging

    try:
        settings = load_log_settings()
    except ConfigError:
        if not doctor:
            raise
        configure_logging()
        return
    configure_logging(settings.log_level, settings.log_format)


def _offline_settings(**overrides: str) -> Settings:
    """Settings for commands that only touch Redis: no channel or token checks apply to them.

    ``model="offline"`` for commands that never ask a model, so a broken ``TRULOOP_MODEL`` does not stop them.
    """
    from .config import load_settings

    return load_settings(channel="local", jwt_secret=secrets.token_urlsafe(32), **overrides)


def _announce(command: str, settings: Settings, where: str) -> None:
    """The one line saying what this process runs with (and a warning for a likely mistake)."""
    from .config import masked_url

    fallbacks = settings.fallback_models
    model = settings.model + (f" (then {', '.join(fallbacks)})" if fallbacks else "")
    logger.info(
        "%s: model %s, channel %s, Redis %s, queue %s, %s",
        command,
        model,
        settings.channel,
        masked_url(settings.redis_url),
        settings.queue_name,
        where,
    )
    if settings.channel == "sendbird" and settings.model == "offline":
        logger.warning(
            "TRULOOP_CHANNEL=sendbird with TRULOOP_MODEL=offline: people on Sendbird get the built-in "
            "rule-based model's answers; set TRULOOP_MODEL to a real model (e.g. openai-chat:gpt-4o-mini)"
        )


class _Stop(BaseException):
    """SIGTERM or SIGINT arrived before the command's own handling of them was in place."""


@contextmanager
def _stoppable() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise :class:`_Stop` at once (even in a sleep or a connect)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Stop(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _wait_for_redis(url: str) -> None:
    """Return once Redis answers PING, trying again after 1, 2, 4 … 30 s; one line says it is unreachable.

    Raises :class:`~.commands.doctor.RedisProblem` when something answers but not as usable Redis.
    """
    from .commands.doctor import RedisUnreachable, ping_redis
    from .config import masked_url

    delay, failures = 1.0, 0
    while True:
        try:
            version = ping_redis(url)
        except RedisUnreachable as exc:
            failures += 1
            log = logger.warning if failures == 1 else logger.debug
            log(
                "Redis at %s is unreachable (%s); trying again in %.0f s, then with growing pauses "
                "(up to %.0f s) until it answers",
                masked_url(url),
                exc,
                delay,
                REDIS_BACKOFF_MAX_S,
            )
            time.sleep(delay)
            delay = min(delay * 2, REDIS_BACKOFF_MAX_S)
            continue
        if failures:
            logger.info("Redis at %s answers now (Redis %s)", masked_url(url), version)
        return


def _redis_refused(url: str, problem: Exception) -> int:
    from .config import masked_url

    logger.error("Redis at %s: %s; fix TRULOOP_REDIS_URL", masked_url(url), problem)
    return 1


def _serve(args: argparse.Namespace) -> int:
    from .commands.doctor import RedisProblem
    from .config import load_settings

    settings = load_settings()  # fail here, with a readable message, rather than inside every HTTP worker
    workers = f"{args.workers} HTTP worker process{'es' if args.workers != 1 else ''}"
    _announce("serve", settings, f"listening on http://{args.host}:{args.port} ({workers})")
    try:
        with _stoppable():
            _wait_for_redis(settings.redis_url)
    except _Stop:
        logger.info("stopped before Redis answered")
        return 0
    except RedisProblem as exc:
        return _redis_refused(settings.redis_url, exc)

    import shutil

    import uvicorn

    from .api.http_limits import LimitedHttpToolsProtocol
    from .logs import logging_config

    try:
        made = _share_metrics(args.workers)
    except OSError as exc:
        print(f"{PACKAGE}: {exc}", file=sys.stderr)
        return 2
    try:
        uvicorn.run(
            "truloop_assistant.app:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            proxy_headers=True,
            http=LimitedHttpToolsProtocol,
            log_config=logging_config(settings.log_level, settings.log_format),  # also in each worker process
            log_level=settings.log_level.lower(),
        )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return 0


METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def _share_metrics(workers: int) -> Path | None:
    """Set up where ``serve``'s HTTP processes keep their metrics for ``/metrics`` to sum (prometheus-client's
    multiprocess mode); the directory made for it, to remove at the end.

    ``PROMETHEUS_MULTIPROC_DIR`` when set, emptied of an earlier run's figures (a process would take on a
    stale one's under its process id); else, with several processes, a temporary directory. Called before
    any metric exists in this process, which serves too when it is the only one.
    """
    import tempfile
    from pathlib import Path

    given = os.environ.get(METRICS_DIR_ENV)
    if not given and workers < 2:
        return None
    if given:
        where = Path(given)
        try:
            where.mkdir(parents=True, exist_ok=True)
            for stale in where.glob("*.db"):
                stale.unlink()
        except OSError as exc:
            raise OSError(f"{METRICS_DIR_ENV}={given}: cannot use it ({exc.strerror or exc})") from None
    else:
        try:
            where = Path(tempfile.mkdtemp(prefix="truloop-metrics-"))
        except OSError as exc:
            raise OSError(
                f"cannot make a directory for the HTTP processes' metrics ({exc.strerror or exc}): "
                f"set {METRICS_DIR_ENV} to a writable one"
            ) from None
        os.environ[METRICS_DIR_ENV] = str(where)  # the processes uvicorn starts inherit it
    logger.info("the HTTP processes' metrics are kept in %s and summed at /metrics", where)
    return None if given else where


def _run_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run the worker's loop on uvloop (installed with uvicorn's standard extras), else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop has no wheel for this platform
        return asyncio.run(main)
    return uvloop.run(main)


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _run_worker(args: argparse.Namespace) -> int:
    if args.probe:  # a health check: quick, and without the worker's settings
        from .runtime.probe import probe

        if args.metrics_port is None:
            print(f"{PACKAGE}: worker --probe needs the worker's --metrics-port", file=sys.stderr)
            return 2
        ports = range(args.metrics_port, args.metrics_port + args.processes)
        return probe(args.metrics_host, ports, ready=args.ready)

    from .commands.doctor import RedisProblem
    from .config import load_settings

    settings = load_settings()
    if args.processes > 1:
        from .runtime.processes import supervise

        _announce("worker", settings, f"{args.processes} processes, concurrency {args.concurrency} each")
        return supervise(_child_commands(args))
    metrics = "" if args.metrics_port is None else f", metrics on {args.metrics_host}:{args.metrics_port}"
    _announce("worker", settings, f"concurrency {args.concurrency}{metrics}")
    health = None
    if args.metrics_port is not None:
        from . import metrics as _families  # noqa: F401  (listed before the first turn)
        from .runtime.probe import WorkerHealth, serve

        health = WorkerHealth()  # /readyz answers 503 "starting" until the worker's loop ticks
        serve(health, args.metrics_port, host=args.metrics_host)  # and /metrics, as before
    try:
        with _stoppable():  # until the worker's own handlers take over, a signal stops it right away
            _wait_for_redis(settings.redis_url)
            return _run_loop(_worker(settings, args.concurrency, health))
    except _Stop:
        logger.info("stopped before the worker started")
        return 0
    except RedisProblem as exc:
        return _redis_refused(settings.redis_url, exc)


def _child_commands(args: argparse.Namespace) -> list[list[str]]:
    """The command line of each worker process ``--processes`` starts."""
    commands = []
    for i in range(args.processes):
        command = [
            sys.executable,
            "-m",
            "truloop_assistant.cli",
            "worker",
            "--concurrency",
            str(args.concurrency),
        ]
        if args.metrics_port is not None:
            command += ["--metrics-port", str(args.metrics_port + i), "--metrics-host", args.metrics_host]
        commands.append(command)
    return commands


async def _worker(settings: Settings, concurrency: int, health: WorkerHealth | None = None) -> int:
    from .runtime.probe import keep_alive
    from .runtime.scanners import run_scanners
    from .runtime.worker import SHUTDOWN_GRACE_S, build_worker, stop_task
    from .services import Services

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stopping.set)
    services = Services.create(settings)
    alive = None
    if health is not None:  # ticks and PINGs for /healthz and /readyz until the worker has stopped
        alive = asyncio.create_task(keep_alive(health, services.redis), name="worker-health")
    try:

        async def background() -> None:
            logger.info("worker started: taking turns from queue %r", settings.queue_name)
            await run_scanners(services)

        worker = build_worker(
            services.queue.queue,
            services.drainer(),
            concurrency=concurrency,
            background=background,
        )
        # The signals stay this function's (saq would take them only once started): one that comes
        # while the worker is still starting stops it as well.
        worker.SIGNALS = []
        running = asyncio.create_task(worker.start(), name="worker")
        stop = asyncio.create_task(stopping.wait(), name="worker-stop")
        await asyncio.wait({running, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not running.done():
            logger.info("stopping: turns in flight get up to %d s to finish", SHUTDOWN_GRACE_S)
            # A stop while saq is still starting would leave the loops it starts next running.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10):
                    while not worker.tasks and not running.done():  # noqa: ASYNC110 (saq has no event for it)
                        await asyncio.sleep(0.05)
            await worker.stop()
        await running
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        if alive is not None:
            await stop_task(alive)
        await services.aclose()
    return 0


def _dev(args: argparse.Namespace) -> int:
    import uvicorn

    from .api.http_limits import LimitedHttpToolsProtocol
    from .app import create_app
    from .backends.users import SAMPLE_USERS_FILE, load_users_file
    from .commands.doctor import RedisProblem, ping_redis
    from .commands.users import import_users
    from .config import given_settings, load_settings, masked_url
    from .local.embedded_redis import RedisServer
    from .store import keys

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
            create_app(settings, embedded_worker=True),
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


if __name__ == "__main__":
    raise SystemExit(main())
