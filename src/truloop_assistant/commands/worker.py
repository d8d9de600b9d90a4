"""``truloop-assistant worker``: consume queued turns and resumes (or, with ``--probe``, ask a running
worker's health)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from .startup import PACKAGE, STOP_SIGNALS, Stop, announce, redis_refused, stoppable, wait_for_redis

if TYPE_CHECKING:
    from ..config import Settings
    from ..runtime.probe import WorkerHealth

logger = logging.getLogger("truloop_assistant.cli")

DEFAULT_CONCURRENCY = 100
"""Turns one worker process keeps in flight: each mostly waits on the model, so many fit in one core."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = subparsers.add_parser("worker", help="consume queued turns and resumes")
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


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def run(args: argparse.Namespace) -> int:
    if args.probe:  # a health check: quick, and without the worker's settings
        from ..runtime.probe import probe

        if args.metrics_port is None:
            print(f"{PACKAGE}: worker --probe needs the worker's --metrics-port", file=sys.stderr)
            return 2
        ports = range(args.metrics_port, args.metrics_port + args.processes)
        return probe(args.metrics_host, ports, ready=args.ready)

    from ..config import load_settings
    from .doctor import RedisProblem

    settings = load_settings()
    if args.processes > 1:
        from ..runtime.processes import supervise

        announce("worker", settings, f"{args.processes} processes, concurrency {args.concurrency} each")
        return supervise(_child_commands(args))
    metrics = "" if args.metrics_port is None else f", metrics on {args.metrics_host}:{args.metrics_port}"
    announce("worker", settings, f"concurrency {args.concurrency}{metrics}")
    health = None
    if args.metrics_port is not None:
        from .. import metrics as _families  # noqa: F401  (listed before the first turn)
        from ..runtime.probe import WorkerHealth, serve

        health = WorkerHealth()  # /readyz answers 503 "starting" until the worker's loop ticks
        serve(health, args.metrics_port, host=args.metrics_host)  # and /metrics, as before
    try:
        with stoppable():  # until the worker's own handlers take over, a signal stops it right away
            wait_for_redis(settings.redis_url)
            return _run_loop(_worker(settings, args.concurrency, health))
    except Stop:
        logger.info("stopped before the worker started")
        return 0
    except RedisProblem as exc:
        return redis_refused(settings.redis_url, exc)


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
    from ..runtime import collector
    from ..runtime.probe import keep_alive
    from ..runtime.queue_worker import SHUTDOWN_GRACE_S, build_worker, stop_task
    from ..runtime.scanners import run_scanners
    from ..services import Services

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stopping.set)
    services = Services.create(settings)
    collector.settle()
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


def _run_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run the worker's loop on uvloop (installed with uvicorn's standard extras), else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop has no wheel for this platform
        return asyncio.run(main)
    return uvloop.run(main)
