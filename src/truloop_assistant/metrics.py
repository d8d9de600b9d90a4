"""Prometheus metrics: the API's ``GET /metrics`` and the worker's ``--metrics-port``.

Each process counts what it does itself; scrape every worker process (a worker started with
``--processes N`` serves process ``i`` on ``--metrics-port + i``). The HTTP processes of one
``serve --workers N`` keep their figures in files of one directory (prometheus-client's multiprocess
mode, ``PROMETHEUS_MULTIPROC_DIR``, set up by ``serve``), and whichever of them answers ``/metrics``
answers with the sum. Gauges that describe shared state (pending calls, queued jobs) are read from
Redis by every worker, so any one of them is right (merged, the latest reading wins).
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's variable: the directory where each process of a ``serve --workers N`` keeps
its figures (read when the library is imported, so it must be set before the processes start)."""

WEBHOOKS = Counter("truloop_webhooks_total", "Sendbird webhook deliveries by outcome", ["outcome"])
WEBHOOK_ACK_SECONDS = Histogram(
    "truloop_webhook_ack_seconds",
    "Time from a webhook request's start to its answer",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
TOOL_MESSAGES = Counter("truloop_tool_messages_total", "Device JSON-RPC responses by HTTP status", ["status"])

TURNS = Counter(
    "truloop_turns_total",
    "Turn steps by how they ended: answered, paused, failed, limited; and paused turns that "
    "ended expired or superseded",
    ["outcome"],
)
TURN_SECONDS = Histogram(
    "truloop_turn_seconds",
    "Wall time of one turn step (the run for a new message, or a resume)",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120),
)
TOOL_CALLS = Counter(
    "truloop_tool_calls_total",
    "Tool calls by tool, kind (server, device, approval) and how they ended (or invalid)",
    ["tool", "kind", "status"],
)
TOOL_CALL_SECONDS = Histogram(
    "truloop_tool_call_seconds",
    "Tool call time: a server tool's run, or a device call from sending to the resume",
    ["tool", "kind"],
    buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600),
)
MODEL_TOKENS = Counter("truloop_model_tokens_total", "Model tokens used", ["direction"])
MODEL_REQUESTS = Counter(
    "truloop_model_requests_total",
    "Model requests answered, by the model that answered (its configured name) and its role: the "
    "primary (TRULOOP_MODEL) or a fallback (TRULOOP_FALLBACK_MODELS)",
    ["model", "role"],
)
MODEL_REQUEST_SECONDS = Histogram(
    "truloop_model_request_seconds",
    "One model request's time, by outcome (ok or error)",
    ["outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60),
)
PENDING_CALLS = Gauge(
    "truloop_pending_calls",
    "Device calls waiting for the phone's answer (all workers)",
    multiprocess_mode="mostrecent",  # every reading is of the same Redis: the latest one is right
)
QUEUED_JOBS = Gauge(
    "truloop_queue_jobs",
    "Jobs in the turn queue by state (all workers)",
    ["state"],
    multiprocess_mode="mostrecent",
)
SENDBIRD_RETRIES = Counter(
    "truloop_sendbird_retries_total", "Sendbird sends retried, by the status that made them retry", ["status"]
)
SENDBIRD_PACED = Counter(
    "truloop_sendbird_paced_total",
    "Platform API calls by method and kind, by what the app-wide budget did with them: sent now, sent "
    "after a wait, or skipped (a typing start or a growing update with no budget to spare, a wait too long)",
    ["method", "kind", "outcome"],
)
SENDBIRD_FAILURES = Counter(
    "truloop_sendbird_send_failures_total",
    "Sendbird sends that failed after their retries (retryable: the drain tries again later) or for good",
    ["retryable"],
)
DEAD_LETTERS = Counter(
    "truloop_dead_letters_total", "Conversation events given up after their retries (kept for inspect)"
)
UNPAIRED_TOOL_CALLS = Counter(
    "truloop_unpaired_tool_calls_total", "Tool calls in a finished run that have no result (should stay 0)"
)
VERIFIER_FLAGS = Counter(
    "truloop_verifier_flags_total",
    "Turns the verifier flagged: a call without a result, or an answer while a call was pending",
    ["flag"],
)


def exposition() -> bytes:
    """The Prometheus text of ``/metrics``: this process's figures, or with ``PROMETHEUS_MULTIPROC_DIR``
    set, the sum of every process's of that directory (the API's processes under ``serve --workers N``)."""
    if not os.environ.get(MULTIPROCESS_ENV):
        return generate_latest()
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    return generate_latest(registry)
