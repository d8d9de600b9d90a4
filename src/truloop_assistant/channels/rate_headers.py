"""What Sendbird's answers say of its rate limits: the wait a 429 asks for and a method's stated budget.

A 429 carries code 500910 and ``X-RateLimit-Limit`` (e.g. ``5;w=1``), ``X-RateLimit-Remaining``,
``X-RateLimit-Reset`` and ``X-RateLimit-RetryAfter`` (the Platform API's "Rate limits" page recommends
retrying after the last; its unit is not stated there, and Sendbird's error text gives seconds with a
fraction: ``retry_after: 0.0697s``, community.sendbird.com/t/8285). Whether answers other than 429s
carry the headers is not documented: whichever do are read the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

MAX_RETRY_AFTER_S = 60.0
"""The longest wait a 429 is honoured for (a larger value is taken as this)."""


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """The wait a 429 (or 503) asks for, in seconds: ``X-RateLimit-RetryAfter``, else ``Retry-After``.

    A value over 1000 is read as milliseconds, so either reading of the unit waits at least as long as
    asked, within ``MAX_RETRY_AFTER_S``.
    """
    for name in ("X-RateLimit-RetryAfter", "Retry-After"):
        try:
            value = float(headers.get(name) or "nan")
        except ValueError:
            continue
        if value == value and value >= 0:  # not NaN
            return min(value / 1000 if value > 1000 else value, MAX_RETRY_AFTER_S)
    return None


_NARROW = re.compile(r"^/v3/group_channels(/[^/]+/(messages|invite))?$|^/v3/users/[^/]+$")
"""Calls Sendbird also checks at a narrower scope (a channel, a user) before the plan's: message
sends, channel creations, invitations and user updates ("Rate-limited APIs"). Their 429s and headers
may be that scope's, so no budget is learned from them."""


def learns_from(method: str, path: str) -> bool:
    """Whether the method's plan budget may be learned from the answer to this call."""
    return method == "GET" or method == "DELETE" or not _NARROW.match(path.split("?", 1)[0])


def limit_of(header: str | None) -> float | None:
    """A per-second budget from ``X-RateLimit-Limit`` (``5``, ``5;w=1``), else None (no header, or
    a window other than a second: a different limit than the plan's)."""
    if not header:
        return None
    first = header.split(",", 1)[0].strip()
    count, _, rest = first.partition(";")
    window = 1.0
    for param in rest.split(";"):
        name, _, value = param.strip().partition("=")
        if name == "w":
            try:
                window = float(value)
            except ValueError:
                return None
    try:
        limit = float(count)
    except ValueError:
        return None
    return limit if window == 1.0 and 0 < limit < math.inf else None
