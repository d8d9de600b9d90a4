"""Traces: one per turn, from the webhook through the queue, the agent run and the sends.

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) or
``LOGFIRE_TOKEN`` is set. Off means off: no SDK is configured and nothing is instrumented, and
every helper here returns at once. On, :func:`configure` sets up Logfire's
OpenTelemetry SDK (OTLP/HTTP to the endpoint, and/or to Logfire with the token; the standard
``OTEL_*`` variables apply) and instruments pydantic-ai, FastAPI (:func:`instrument_app`), httpx
(the model SDKs, the tools' backends), aiohttp (the sends to Sendbird: sessions opened after
:func:`configure`, which the Sendbird client's first request does) and Redis.

The trace crosses processes in Redis, as a W3C ``traceparent`` string: the request that queues a
turn stores its context on the inbox event, the worker's ``turn`` step span starts as its child,
a paused turn keeps the step's context and the resume continues from it (same trace id, linked to
the request that answered). An inbound ``traceparent``, ``tracestate`` or ``baggage`` is never
taken up: every caller of the API (Sendbird's webhook, verified by its signature but no tracing peer
of ours; phones; browsers) could otherwise join a trace of its choosing or put words in our spans
and in the headers of our own calls. Each request starts a trace of the server's, and a valid
inbound trace id is only noted on the request's span (``truloop.inbound_trace_id``). Message
contents (prompts, answers, tool arguments and results, request bodies) stay out of the spans
unless ``TRULOOP_TRACE_CONTENT=true``. The bytes of a person's pictures and documents stay out of
them even then: a file sent to the model is recorded by its media type alone.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.propagate import get_global_textmap, set_global_textmap
from opentelemetry.propagators.textmap import (
    CarrierT,
    Getter,
    Setter,
    TextMapPropagator,
    default_getter,
    default_setter,
)
from opentelemetry.trace import INVALID_SPAN, Link, Span, SpanKind, Tracer, TracerProvider, format_trace_id
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger(__name__)

CONTENT_ENV = "TRULOOP_TRACE_CONTENT"
"""``true`` records message contents in the spans (prompts, answers, tool arguments and results),
never the bytes of a file."""

NOT_TRACED_PATHS = ("/healthz", "/readyz", "/metrics")
"""Probes and scrapes: frequent, and nothing to follow."""

Step: TypeAlias = Context
"""A step's trace context, as :func:`turn_step` yields it."""

_TRUE = {"1", "true", "yes", "on"}
_lock = threading.Lock()
_enabled: bool | None = None
"""None until :func:`configure` ran in this process; then whether traces are exported."""
_content = False
_propagator = TraceContextTextMapPropagator()
_tracer: Tracer | None = None


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def configure(service_name: str) -> bool:
    """Set up tracing for this process, once; whether traces are exported.

    The first call decides (later calls return its answer and change nothing), so the API and an
    embedded worker in one process may both call it. ``OTEL_SERVICE_NAME`` wins over
    ``service_name``.
    """
    global _enabled, _content, _tracer
    with _lock:
        if _enabled is not None:
            return _enabled
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        )
        token = os.environ.get("LOGFIRE_TOKEN")
        if _flag("OTEL_SDK_DISABLED") or not (endpoint or token):
            _enabled = False
            return False

        import logfire

        _content = _flag(CONTENT_ENV)
        logfire.configure(
            send_to_logfire=bool(token),
            service_name=os.environ.get("OTEL_SERVICE_NAME") or service_name,
            console=False,
            metrics=False,  # metrics are Prometheus' (``/metrics``)
            inspect_arguments=False,
            distributed_tracing=True,  # no warning: _OutboundOnly below takes nothing inbound
            add_baggage_to_attributes=False,  # the server sets no baggage; none is an attribute
        )
        set_global_textmap(_OutboundOnly(get_global_textmap()))
        # A photo or a PDF in a message is the person's, and megabytes of base64 in a span: never sent.
        logfire.instrument_pydantic_ai(include_content=_content, include_binary_content=False)
        logfire.instrument_httpx(capture_headers=False)
        logfire.instrument_aiohttp_client(capture_headers=False)
        # Only commands that belong to a trace (a request, a turn): the queue's polling, heartbeats
        # and the scanners would otherwise make a trace of every command, several a second.
        logfire.instrument_redis(tracer_provider=_ChildSpansOnly(trace.get_tracer_provider()))
        _tracer = trace.get_tracer(__name__)
        _enabled = True
        log.info(
            "tracing on (%s%s%s), message contents %s",
            f"OTLP to {endpoint}" if endpoint else "",
            " and " if endpoint and token else "",
            "Logfire" if token else "",
            "recorded" if _content else "not recorded",
        )
        return True


def enabled() -> bool:
    """Whether this process exports traces (False before :func:`configure`)."""
    return bool(_enabled)


def instrument_app(app: FastAPI) -> None:
    """Trace the app's requests (not its probes); nothing when tracing is off."""
    if not _enabled:
        return
    import logfire

    logfire.instrument_fastapi(
        app,
        excluded_urls=",".join(f"{path}$" for path in NOT_TRACED_PATHS),
        request_attributes_mapper=_endpoint_arguments,
        server_request_hook=_note_inbound_trace,
    )


class _OutboundOnly(TextMapPropagator):
    """The process's propagator: our calls carry our trace context; an inbound one is never extracted.

    ``extract`` is what the request instrumentation asks for a request's parent; it answers with the
    context it was given (none: a trace of the server's), never the caller's span or baggage.
    """

    def __init__(self, outbound: TextMapPropagator) -> None:
        self._outbound = outbound

    def extract(
        self, carrier: CarrierT, context: Context | None = None, getter: Getter[CarrierT] = default_getter
    ) -> Context:
        return context if context is not None else Context()

    def inject(
        self, carrier: CarrierT, context: Context | None = None, setter: Setter[CarrierT] = default_setter
    ) -> None:
        self._outbound.inject(carrier, context, setter)

    @property
    def fields(self) -> set[str]:
        return self._outbound.fields


def _note_inbound_trace(span: Span, scope: dict[str, Any]) -> None:
    """Note on a request's span the trace id its caller sent, when well formed (nothing else of it)."""
    if span is None or not span.is_recording():
        return
    sent = next((value for name, value in scope.get("headers") or () if name == b"traceparent"), None)
    if sent is None:
        return
    inbound = trace.get_current_span(_propagator.extract({"traceparent": sent.decode("latin-1")}))
    if (context := inbound.get_span_context()).is_valid:
        span.set_attribute("truloop.inbound_trace_id", format_trace_id(context.trace_id))


def _endpoint_arguments(request: Any, attributes: dict[str, Any]) -> dict[str, Any] | None:
    """What the request span keeps of the endpoint's arguments: bodies only with contents on."""
    errors = [{"type": e.get("type"), "loc": e.get("loc")} for e in attributes.get("errors") or []]
    if not _content:
        return {"errors": errors} if errors else None
    from pydantic import BaseModel

    values = {
        k: v
        for k, v in (attributes.get("values") or {}).items()
        if isinstance(v, BaseModel | str | int | float | bool | list | dict)
    }
    return {"values": values, "errors": attributes.get("errors") or []}


def current_traceparent() -> str | None:
    """The current span's context as a W3C ``traceparent``, to store with queued work."""
    if not _enabled:
        return None
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier.get("traceparent")


def _context(traceparent: str | None) -> Context | None:
    if not traceparent:
        return None
    context = _propagator.extract({"traceparent": traceparent})
    return context if trace.get_current_span(context).get_span_context().is_valid else None


@contextmanager
def turn_step(
    kind: Literal["message", "resume"],
    *,
    channel_url: str,
    turn_id: str,
    user_id: str | None,
    parent: str | None,
    link: str | None = None,
) -> Iterator[Step | None]:
    """The ``turn`` span of one step, a child of ``parent`` (a stored traceparent) and linked to
    ``link``; yields its context for what the step's sends do afterwards (None when tracing is off).
    """
    if not _enabled or _tracer is None:
        yield None
        return
    attributes = {"truloop.kind": kind, "truloop.channel_url": channel_url, "truloop.turn_id": turn_id}
    if user_id:
        attributes["truloop.user_id"] = user_id
    links: Sequence[Link] = []
    if (linked := _context(link)) is not None:
        links = [Link(trace.get_current_span(linked).get_span_context())]
    # With no stored context the step starts a trace of its own, whatever runs around it.
    context = _context(parent) or Context()
    with _tracer.start_as_current_span(
        "turn", context=context, kind=SpanKind.CONSUMER, attributes=attributes, links=links
    ) as span:
        yield trace.set_span_in_context(span)


def within(context: Step | None, name: str) -> AbstractContextManager[object]:
    """A span ``name`` under a step's context (from :func:`turn_step`); nothing without one."""
    if context is None or _tracer is None:
        return nullcontext()
    return _tracer.start_as_current_span(name, context=context)


class _ChildSpansOnly(TracerProvider):
    """Hands out tracers that record a span only inside a trace already started."""

    def __init__(self, inner: TracerProvider) -> None:
        self._inner = inner

    def get_tracer(self, *args: Any, **kwargs: Any) -> Tracer:
        return _ChildSpansTracer(self._inner.get_tracer(*args, **kwargs))


class _ChildSpansTracer(Tracer):
    def __init__(self, inner: Tracer) -> None:
        self._inner = inner

    def start_span(self, name: str, context: Context | None = None, *args: Any, **kwargs: Any) -> Span:
        if not trace.get_current_span(context).get_span_context().is_valid:
            return INVALID_SPAN
        return self._inner.start_span(name, context, *args, **kwargs)

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self, name: str, context: Context | None = None, *args: Any, **kwargs: Any
    ) -> Iterator[Span]:
        if not trace.get_current_span(context).get_span_context().is_valid:
            yield INVALID_SPAN
            return
        with self._inner.start_as_current_span(name, context, *args, **kwargs) as span:
            yield span
