"""``serve``'s ``/metrics`` on a port of its own (``TRULOOP_METRICS_PORT``), away from the API's.

It answers from a daemon thread of the ``serve`` process: with one HTTP process that process is the
API's, with ``--workers N`` it is their parent, and it answers with the sum of every process's figures
(prometheus-client's multiprocess mode, set up by ``serve`` before this starts). Every other path is
404, in the API's error shape.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

METRICS_PATH = "/metrics"


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a slow scrape never holds up the process's exit


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request: a scrape comes every few seconds."""


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


def serve_metrics(port: int, host: str = "127.0.0.1") -> WSGIServer:
    """Serve :func:`metrics_app` on ``host:port`` from a daemon thread; :class:`OSError` when the port
    cannot be bound. ``shutdown()`` and ``server_close()`` the returned server to stop it."""
    family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    server_class = type("_MetricsServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(host, port, metrics_app, server_class, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="serve-metrics", daemon=True).start()
    return server
