"""A Redis outage in the logs: one line when Redis goes and one when it is back, per component.

While Redis is down every part of a process that uses it fails at once, and each would log its
traceback every time it tries again. :class:`RedisOutageFilter` (on the log handler) turns the first
record of a component (:func:`component`) whose exception is a Redis outage into one WARNING
``Redis unreachable (<component>): <error>`` without the traceback, and drops the component's next
such records. :func:`redis_answered`, called whenever Redis answers a command, ends the outages:
one INFO ``Redis is back (<component>) after N s`` for each component that reported one.

A Redis outage is an exception that is, or was caused by, redis-py's ``ConnectionError`` or
``TimeoutError``, or a refused or reset connection raised inside redis-py. Any other exception keeps
its traceback. redis-py is imported only when a record with an exception is looked at.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

log = logging.getLogger("truloop_assistant.redis")

PACKAGE_PREFIX = "truloop_assistant."
_lock = threading.Lock()
_down_since: dict[str, float] = {}
"""The components in an outage and when it began for each (monotonic seconds)."""
_clock: Callable[[], float] = time.monotonic


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, each once."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            todo += current.exceptions


def _raised_in_redis(exc: BaseException) -> bool:
    frame = exc.__traceback__
    while frame is not None:
        if str(frame.tb_frame.f_globals.get("__name__", "")).startswith("redis."):
            return True
        frame = frame.tb_next
    return False


def outage_error(exc: BaseException) -> BaseException | None:
    """The exception in ``exc``'s chain that says Redis is unreachable, or None when it is not an outage."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    lost = (ConnectionRefusedError, ConnectionResetError)
    for error in _chain(exc):
        if isinstance(error, RedisConnectionError | RedisTimeoutError):
            return error
        if isinstance(error, lost) and _raised_in_redis(error):
            return error
    return None


def component(logger_name: str) -> str:
    """The part of the process a logger belongs to: the package's area (``runtime``, ``pipeline``,
    ``ledger``…) or the library (``saq``, ``uvicorn``…)."""
    return logger_name.removeprefix(PACKAGE_PREFIX).partition(".")[0]


class RedisOutageFilter(logging.Filter):
    """One WARNING per component for a Redis outage instead of a traceback per failure (see the module)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not record.exc_info or record.exc_info[1] is None:
            return True
        error = outage_error(record.exc_info[1])
        if error is None:
            return True
        name = component(record.name)
        with _lock:
            if name in _down_since:
                return False
            _down_since[name] = _clock()
        record.msg = "Redis unreachable (%s): %s"
        record.args = (name, str(error) or type(error).__name__)
        record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        record.exc_info = record.exc_text = record.stack_info = None
        return True


def redis_answered() -> None:
    """Redis answered a command: every component's outage is over (one INFO line each)."""
    if not _down_since:  # the usual case, without taking the lock
        return
    now = _clock()
    with _lock:
        ended = sorted(_down_since.items())
        _down_since.clear()
    for name, since in ended:
        log.info("Redis is back (%s) after %.0f s", name, now - since)


def in_outage() -> list[str]:
    """The components whose outage has not ended, by name."""
    with _lock:
        return sorted(_down_since)
