"""Prometheus metrics (``GET /metrics``)."""

from prometheus_client import Counter, Histogram

WEBHOOKS = Counter("truloop_webhooks_total", "Sendbird webhook deliveries by outcome", ["outcome"])
TOOL_MESSAGES = Counter("truloop_tool_messages_total", "Device JSON-RPC responses by HTTP status", ["status"])
TURNS = Counter("truloop_turns_total", "Agent runs by outcome", ["outcome"])
TURN_SECONDS = Histogram("truloop_turn_seconds", "Wall time of one agent run (new message or resume)")
TOOL_CALLS = Counter("truloop_tool_calls_total", "Server tool calls by tool and outcome", ["tool", "outcome"])
TOOL_SECONDS = Histogram("truloop_tool_seconds", "Server tool run time", ["tool"])
UNPAIRED_TOOL_CALLS = Counter(
    "truloop_unpaired_tool_calls_total", "Tool calls in a finished run that have no result (should stay 0)"
)
