"""A Platform API call tried again while Sendbird is busy (429), failing (5xx) or silent.

What the 1:1 channels need (their look-up and their creation): a person's invitation should not be
lost to a passing 429 or outage, and Sendbird's own answer (an error included) is the caller's to read.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping
from typing import Any

from .platform_http import PlatformClient, PlatformTransportError, Reply, retry_after

log = logging.getLogger(__name__)

ATTEMPTS = 5
"""Tries of a call that meets a 429, a 5xx or no answer (each after the wait asked for)."""
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


async def request_retried(
    client: PlatformClient,
    method: str,
    path: str,
    *,
    what: str,
    json: Any = None,
    params: Mapping[str, str] | None = None,
) -> Reply:
    """``method path`` in its slot of the app-wide budget, tried again after a 429 (the wait it asks
    for), a 5xx or no answer: the last answer, or the last :class:`PlatformTransportError` if none
    came. ``what`` names the call in the log."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = await client.request(method, path, json=json, params=params)
        except PlatformTransportError:
            if attempt == ATTEMPTS:
                raise
            delay = backoff(attempt)
        else:
            if response.status_code not in RETRY_STATUS or attempt == ATTEMPTS:
                return response
            delay = retry_after(response) or backoff(attempt)
        log.warning("%s failed (attempt %d); retry in %.2fs", what, attempt, delay)
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")


def backoff(attempt: int) -> float:
    """A random wait, longer with each attempt, at most 2 s."""
    return random.uniform(0, min(2.0, 0.1 * 2**attempt))
