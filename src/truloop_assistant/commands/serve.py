"""``truloop-assistant serve``: the HTTP API under uvicorn, once Redis answers."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

from .startup import PACKAGE, Stop, announce, redis_refused, stoppable, wait_for_redis

if TYPE_CHECKING:
    from pathlib import Path

logger = logging.getLogger("truloop_assistant.cli")

METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="HTTP worker processes")


def run(args: argparse.Namespace) -> int:
    from ..config import ConfigError, load_settings
    from .doctor import RedisProblem

    # Fail here, with a readable message, rather than inside every HTTP worker. The model strings are
    # read, not built: the API runs no model, and building one imports its provider's client.
    settings = load_settings(build_models=False)
    if settings.channel == "local":
        raise ConfigError(
            "TRULOOP_CHANNEL=local: the local channel is for `truloop-assistant dev` (its /dev page mints "
            "device tokens for anyone); serve needs TRULOOP_CHANNEL=sendbird"
        )
    workers = f"{args.workers} HTTP worker process{'es' if args.workers != 1 else ''}"
    announce("serve", settings, f"listening on http://{args.host}:{args.port} ({workers})")
    try:
        with stoppable():
            wait_for_redis(settings.redis_url)
    except Stop:
        logger.info("stopped before Redis answered")
        return 0
    except RedisProblem as exc:
        return redis_refused(settings.redis_url, exc)

    import shutil

    import uvicorn

    from ..api.http_limits import LimitedHttpToolsProtocol
    from ..logs import logging_config

    try:
        made = _share_metrics(args.workers)
    except OSError as exc:
        print(f"{PACKAGE}: {exc}", file=sys.stderr)
        return 2
    if settings.metrics_port is not None:
        from ..runtime.metrics_server import serve_metrics

        where = f"{settings.metrics_host}:{settings.metrics_port}"
        try:
            serve_metrics(settings.metrics_port, settings.metrics_host)
        except OSError as exc:
            print(
                f"{PACKAGE}: TRULOOP_METRICS_PORT={settings.metrics_port}: cannot listen on {where} "
                f"({exc.strerror or exc})",
                file=sys.stderr,
            )
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)
            return 2
        logger.info("metrics at http://%s/metrics, not on the API's port", where)
    try:
        uvicorn.run(
            "truloop_assistant.app:serve_app",
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
