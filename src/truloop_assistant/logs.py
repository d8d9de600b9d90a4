"""Log lines of every command: a timestamp on each, text or JSON, and the turn they belong to.

``log_context(channel=..., turn_id=..., call_id=...)`` marks a block of work; every record logged
inside it (in this task, and in tasks it starts) carries those fields: appended as
`` channel=… turn=… call=…`` in text, as keys of the object in JSON. With tracing on, a record
logged inside a span also carries ``trace_id`` and ``span_id`` (lowercase hex, as in a W3C
``traceparent``), to find the trace of a line and the lines of a trace.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from types import MappingProxyType
from typing import IO, Any, Literal

from .redis_outage import RedisOutageFilter

LogFormat = Literal["text", "json"]
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
NOISY_LOGGERS = ("bm25s", "saq", "httpx", "httpx2")
"""Libraries that log per index build, per job or per request (``httpx2`` is the model SDKs' copy of
httpx): WARNING and up unless the level is DEBUG."""
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
HANDLER_NAME = "truloop"
"""The name of the handler :func:`configure_logging` installs (and replaces when called again)."""
TEXT_LABELS = {"channel": "channel", "turn_id": "turn", "call_id": "call"}
"""The fields a turn's lines carry, in the order text lines show them (first), and their names there."""

_EMPTY: Mapping[str, object] = MappingProxyType({})
_context: ContextVar[Mapping[str, object]] = ContextVar("truloop_log_context", default=_EMPTY)
_RECORD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "log_context",
    "color_message",  # uvicorn's message with terminal colours
}


@contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Add ``fields`` to every log record of the block; nested blocks add to (and override) outer ones.

    ``None`` values are left out, so optional ids can be passed as they are.
    """
    added = {name: value for name, value in fields.items() if value is not None}
    token = _context.set(MappingProxyType({**_context.get(), **added}))
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, object]:
    """The fields :func:`log_context` has set here (a copy)."""
    return dict(_context.get())


def trace_fields() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span, or nothing outside one (and with tracing off,
    which starts no span).

    OpenTelemetry is looked up among the loaded modules rather than imported: a process that never
    loaded it has no span, and logging stays quick to import.
    """
    otel_trace = sys.modules.get("opentelemetry.trace")
    if otel_trace is None:
        return {}
    span = otel_trace.get_current_span().get_span_context()
    if not span.is_valid:
        return {}
    return {"trace_id": format(span.trace_id, "032x"), "span_id": format(span.span_id, "016x")}


class ContextFilter(logging.Filter):
    """Puts the current :func:`log_context` fields and the current span's ids (:func:`trace_fields`)
    on each record as ``record.log_context``.

    On a handler, it captures them where the record is made, before any hand-off to another thread.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "log_context"):
            record.log_context = {**_context.get(), **trace_fields()}
        return True


class LibraryFilter(logging.Filter):
    """Drops the noisy libraries' records below WARNING, whatever level a library gives its own logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        return not any(record.name == name or record.name.startswith(f"{name}.") for name in NOISY_LOGGERS)


def _fields(record: logging.LogRecord) -> Mapping[str, object]:
    fields = getattr(record, "log_context", None)
    return fields if isinstance(fields, Mapping) else _context.get()


def timestamp(record: logging.LogRecord) -> str:
    """When the record was made: ISO 8601, local time with its UTC offset, to the millisecond."""
    return datetime.fromtimestamp(record.created).astimezone().isoformat(timespec="milliseconds")


class TextFormatter(logging.Formatter):
    """``<timestamp> <LEVEL> <logger>: <message> channel=… turn=… call=…`` (then any traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        fields = _fields(record)
        names = [name for name in TEXT_LABELS if name in fields] + [n for n in fields if n not in TEXT_LABELS]
        context = " ".join(f"{TEXT_LABELS.get(name, name)}={_text_value(fields[name])}" for name in names)
        if context:
            line = f"{line} {context}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        if record.stack_info:
            line = f"{line}\n{self.formatStack(record.stack_info)}"
        return line


def _text_value(value: object) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in "\"'=" for c in text):
        return json.dumps(text, ensure_ascii=False)
    return text


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``message``, the context fields, extras.

    ``exc`` holds a traceback, ``stack`` a stack; values JSON cannot hold are written as ``str()``.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_fields(record))
        entry.update(
            (name, value) for name, value in record.__dict__.items() if name not in _RECORD_ATTRIBUTES
        )
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def make_formatter(fmt: LogFormat = "text") -> logging.Formatter:
    """The formatter for ``TRULOOP_LOG_FORMAT``."""
    return JsonFormatter() if fmt == "json" else TextFormatter()


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (as logging's own last-resort handler does)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, value: IO[str]) -> None:
        pass


def make_handler(
    fmt: LogFormat = "text", stream: IO[str] | None = None, *, quiet_libraries: bool = True
) -> logging.Handler:
    """A handler writing to ``stream`` (else the current stderr) in the format, with the context filter
    and a Redis outage's few lines instead of its tracebacks (:class:`RedisOutageFilter`)."""
    handler = _StderrHandler() if stream is None else logging.StreamHandler(stream)
    handler.set_name(HANDLER_NAME)
    handler.addFilter(ContextFilter())
    handler.addFilter(RedisOutageFilter())
    if quiet_libraries:
        handler.addFilter(LibraryFilter())
    handler.setFormatter(make_formatter(fmt))
    return handler


def configure_logging(
    level: str | int = "INFO", fmt: LogFormat = "text", *, stream: IO[str] | None = None
) -> None:
    """Send every logger, uvicorn's included, through one handler on the root logger.

    Calling it again replaces that handler; handlers others added to the root logger stay.
    """
    level = level.upper() if isinstance(level, str) else level
    root = logging.getLogger()
    for handler in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(handler)
        handler.close()
    root.addHandler(make_handler(fmt, stream, quiet_libraries=not _is_debug(level)))
    root.setLevel(level)
    for name, logger_level in library_levels(level).items():
        logging.getLogger(name).setLevel(logger_level)
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True


def _is_debug(level: str | int) -> bool:
    return (level.upper() if isinstance(level, str) else level) in ("DEBUG", logging.DEBUG)


def library_levels(level: str | int) -> dict[str, int]:
    """The levels of the noisy libraries' loggers for this level of the commands."""
    return {name: logging.NOTSET if _is_debug(level) else logging.WARNING for name in NOISY_LOGGERS}


def logging_config(level: str | int = "INFO", fmt: LogFormat = "text") -> dict[str, Any]:
    """:func:`configure_logging` as a ``logging.config.dictConfig`` dict (for uvicorn's ``log_config``).

    uvicorn applies it in each process it starts, so ``serve --workers N`` logs alike in all of them.
    """
    level = level.upper() if isinstance(level, str) else level
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "context": {"()": ContextFilter},
            "redis_outage": {"()": RedisOutageFilter},
            "libraries": {"()": LibraryFilter},
        },
        "formatters": {"truloop": {"()": make_formatter, "fmt": fmt}},
        "handlers": {
            HANDLER_NAME: {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "filters": ["context", "redis_outage"] + ([] if _is_debug(level) else ["libraries"]),
                "formatter": "truloop",
            }
        },
        "root": {"level": level, "handlers": [HANDLER_NAME]},
        "loggers": {
            **{name: {"level": lvl} for name, lvl in library_levels(level).items()},
            **{name: {"handlers": [], "propagate": True} for name in UVICORN_LOGGERS},
        },
    }
