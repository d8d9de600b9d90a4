"""A Redis outage in the logs: one WARNING per component while it lasts, one INFO when Redis answers
again, no traceback; any other error keeps its traceback. Records in, lines out."""

from __future__ import annotations

import io
import json
import logging
import logging.config
import re
from collections.abc import Iterator

import pytest
import redis.exceptions

from tests.support import logging_restored
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.logs import configure_logging, logging_config
from truloop_assistant.redis_client import connect
from truloop_assistant.redis_outage import in_outage, outage_error, redis_answered

REFUSED = "Error 111 connecting to 127.0.0.1:6390. Connection refused."


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """``configure_logging`` writing to a buffer; the root logger restored and no outage left after."""
    with logging_restored():
        redis_answered()
        buffer = io.StringIO()
        configure_logging("INFO", "text", stream=buffer)
        yield buffer
        redis_answered()


def lines(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


def refused() -> redis.exceptions.ConnectionError:
    """A ConnectionError as redis-py raises it: while handling the refused connection."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError:
            raise redis.exceptions.ConnectionError(REFUSED)  # noqa: B904 (as redis-py raises it)
    except redis.exceptions.ConnectionError as exc:
        return exc


def failing(log: logging.Logger, exc: BaseException, message: str = "could not do it") -> None:
    try:
        raise exc
    except BaseException:
        log.exception(message)


def test_an_outage_is_one_warning_per_component_and_one_line_when_redis_is_back(logs: io.StringIO) -> None:
    ledger = logging.getLogger("truloop_assistant.ledger")
    saq = logging.getLogger("saq")
    for _ in range(3):
        failing(ledger, refused(), "could not record turn t1 in the ledger")
        failing(saq, refused(), "Error processing job")
    try:  # raised from a Redis error (as a library wraps one)
        raise RuntimeError("job failed") from redis.exceptions.TimeoutError("Timeout reading from socket")
    except RuntimeError:
        logging.getLogger("truloop_assistant.runtime.scanner").error("scan failed", exc_info=True)

    assert [line.split(" ", 1)[1] for line in lines(logs)] == [
        f"WARNING truloop_assistant.ledger: Redis unreachable (ledger): {REFUSED}",
        f"WARNING saq: Redis unreachable (saq): {REFUSED}",
        "WARNING truloop_assistant.runtime.scanner: Redis unreachable (runtime): Timeout reading from socket",
    ]
    logging.getLogger("truloop_assistant.runtime.gauges").exception("gauges failed", exc_info=refused())
    assert len(lines(logs)) == 3  # the same component as the scanner's
    assert in_outage() == ["ledger", "runtime", "saq"]

    redis_answered()
    redis_answered()  # once is enough
    back = lines(logs)[3:]
    assert [re.sub(r"after \d+ s", "after N s", line.split(" ", 1)[1]) for line in back] == [
        f"INFO truloop_assistant.redis: Redis is back ({name}) after N s"
        for name in ("ledger", "runtime", "saq")
    ]
    assert in_outage() == []

    failing(ledger, refused())  # the next outage is told again
    assert lines(logs)[-1].endswith(
        f"WARNING truloop_assistant.ledger: Redis unreachable (ledger): {REFUSED}"
    )


def test_other_errors_keep_their_traceback(logs: io.StringIO) -> None:
    log = logging.getLogger("truloop_assistant.pipeline.test")
    failing(log, ValueError("a real bug"), "turn failed")
    failing(log, ConnectionRefusedError(111, "refused by the model's API"), "model call failed")
    log.warning("Redis is slow: %s", refused())  # no exception attached: logged as it is

    text = logs.getvalue()
    assert "ERROR truloop_assistant.pipeline.test: turn failed\nTraceback" in text
    assert "ValueError: a real bug" in text
    assert "ERROR truloop_assistant.pipeline.test: model call failed\nTraceback" in text
    assert f"WARNING truloop_assistant.pipeline.test: Redis is slow: {REFUSED}" in text
    assert in_outage() == []


def test_a_refused_connection_counts_as_an_outage_only_inside_redis_py() -> None:
    assert outage_error(ConnectionRefusedError(111, "refused")) is None
    assert outage_error(ValueError("x")) is None
    error = refused()
    assert outage_error(error) is error
    group = ExceptionGroup("tasks failed", [ValueError("x"), error])
    assert outage_error(group) is error


async def test_a_real_client_outage_ends_when_redis_answers(logs: io.StringIO, redis_url: str) -> None:
    dead = connect(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    try:
        for _ in range(2):
            try:
                await dead.ping()
            except redis.exceptions.ConnectionError:
                logging.getLogger("truloop_assistant.runtime.gauges").exception("gauges failed")
    finally:
        await dead.aclose()
    assert len(lines(logs)) == 1
    assert "WARNING truloop_assistant.runtime.gauges: Redis unreachable (runtime): " in lines(logs)[0]

    live = connect(redis_url)
    try:
        await live.ping()  # any command Redis answers ends the outage
    finally:
        await live.aclose()
    assert re.search(r"INFO truloop_assistant\.redis: Redis is back \(runtime\) after \d+ s$", lines(logs)[1])


def test_the_config_uvicorn_applies_has_the_filter_too(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    redis_answered()
    try:
        logging.config.dictConfig(logging_config("INFO", "json"))
        for _ in range(2):
            failing(logging.getLogger("uvicorn.error"), refused(), "Exception in ASGI application")
        redis_answered()
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[1]:
            root.addHandler(handler)
        root.setLevel(saved[0])
    entries = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(e["level"], e["message"]) for e in entries][:1] == [
        ("WARNING", f"Redis unreachable (uvicorn): {REFUSED}")
    ]
    assert "exc" not in entries[0]
    assert entries[1]["message"].startswith("Redis is back (uvicorn) after ")
