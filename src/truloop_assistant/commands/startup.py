"""What ``serve``, ``worker`` and ``dev`` share as they start: the line saying what runs, Redis
awaited with backoff, and a stop signal honoured at once until the command handles its own.

Their lines keep the logger name ``truloop_assistant.cli``, the command line's.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings

logger = logging.getLogger("truloop_assistant.cli")

PACKAGE = "truloop-assistant"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
REDIS_BACKOFF_MAX_S = 30.0


def announce(command: str, settings: Settings, where: str) -> None:
    """The one line saying what this process runs with (and a warning for a likely mistake)."""
    from ..config import masked_url

    fallbacks = settings.fallback_models
    model = settings.model + (f" (then {', '.join(fallbacks)})" if fallbacks else "")
    logger.info(
        "%s: model %s, channel %s, Redis %s, queue %s, %s",
        command,
        model,
        settings.channel,
        masked_url(settings.redis_url),
        settings.queue_name,
        where,
    )
    if settings.channel == "sendbird" and settings.model == "offline":
        logger.warning(
            "TRULOOP_CHANNEL=sendbird with TRULOOP_MODEL=offline: people on Sendbird get the built-in "
            "rule-based model's answers; set TRULOOP_MODEL to a real model (e.g. openai-chat:gpt-4o-mini)"
        )


class Stop(BaseException):
    """SIGTERM or SIGINT arrived before the command's own handling of them was in place."""


@contextmanager
def stoppable() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise :class:`Stop` at once (even in a sleep or a connect)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stop(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def wait_for_redis(url: str) -> None:
    """Return once Redis answers PING, trying again after 1, 2, 4 … 30 s; one line says it is unreachable.

    Raises :class:`~.doctor.RedisProblem` when something answers but not as usable Redis.
    """
    from ..config import masked_url
    from .doctor import RedisUnreachable, ping_redis

    delay, failures = 1.0, 0
    while True:
        try:
            version = ping_redis(url)
        except RedisUnreachable as exc:
            failures += 1
            log = logger.warning if failures == 1 else logger.debug
            log(
                "Redis at %s is unreachable (%s); trying again in %.0f s, then with growing pauses "
                "(up to %.0f s) until it answers",
                masked_url(url),
                exc,
                delay,
                REDIS_BACKOFF_MAX_S,
            )
            time.sleep(delay)
            delay = min(delay * 2, REDIS_BACKOFF_MAX_S)
            continue
        if failures:
            logger.info("Redis at %s answers now (Redis %s)", masked_url(url), version)
        return


def redis_refused(url: str, problem: Exception) -> int:
    from ..config import masked_url

    logger.error("Redis at %s: %s; fix TRULOOP_REDIS_URL", masked_url(url), problem)
    return 1
