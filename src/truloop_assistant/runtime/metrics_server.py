"""``serve``'s ``/metrics`` on a port of its own (``TRULOOP_METRICS_PORT``), away from the API's.

It answers from a daemon thread of the ``serve`` process: with one HTTP process that process is the
API's, with ``--workers N`` it is their parent, and it answers with the sum of every process's figures
(prometheus-client's multiprocess mode, set up by ``serve`` before this starts). Every other path is
404, in the API's error shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .side_port import SidePortServer

METRICS_PATH = "/metrics"


def metrics_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``GET /metrics``: the Prometheus text; anything else: 404."""
    from prometheus_client import CONTENT_TYPE_LATEST

    from ..metrics import exposition

    if environ.get("PATH_INFO") == METRICS_PATH:
        status, content_type, body = "200 OK", CONTENT_TYPE_LATEST, exposition()
    else:
        error = {"error": {"code": "not_found", "message": "only /metrics is served on this port"}}
        status, content_type, body = "404 Not Found", "application/json", json.dumps(error).encode()
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [] if environ.get("REQUEST_METHOD") == "HEAD" else [body]


def serve_metrics(port: int, host: str = "127.0.0.1") -> SidePortServer:
    """Serve :func:`metrics_app` on ``host:port`` from a thread of its own, within :mod:`.side_port`'s
    bounds; :class:`OSError` when the port cannot be bound. ``shutdown()`` and ``server_close()`` the
    returned server to stop it."""
    return SidePortServer(metrics_app, host, port, name="serve-metrics")
