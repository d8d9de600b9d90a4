"""Sendbird's plan limits: Platform API calls per second for each HTTP method, app-wide.

From the Platform API's "Rate limits" page (docs.sendbird.com/docs/chat/platform-api/v3/application/
understanding-rate-limits/rate-limits, "Plan-based rate limits"): the limits apply per HTTP method and
per application, by the plan's monthly active users. A plan Sendbird has raised is set outright with
``TRULOOP_SENDBIRD_RATES``.
"""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal["GET", "POST", "PUT", "DELETE"]
METHODS: tuple[Method, ...] = get_args(Method)

Plan = Literal["free-trial", "5k", "10k", "25k", "50k", "100k"]
PLANS: dict[str, dict[str, float]] = {
    "free-trial": {"GET": 10, "POST": 5, "PUT": 5, "DELETE": 5},
    "5k": {"GET": 60, "POST": 10, "PUT": 10, "DELETE": 10},
    "10k": {"GET": 100, "POST": 20, "PUT": 20, "DELETE": 20},
    "25k": {"GET": 200, "POST": 40, "PUT": 40, "DELETE": 40},
    "50k": {"GET": 400, "POST": 100, "PUT": 100, "DELETE": 100},
    "100k": {"GET": 600, "POST": 200, "PUT": 200, "DELETE": 200},
}
"""Calls per second by plan (``TRULOOP_SENDBIRD_PLAN``), per method."""


def parse_rates(text: str) -> dict[str, float]:
    """``GET=600,POST=200,PUT=200,DELETE=200`` (any of the four, in any order) as calls per second.

    Raises ValueError naming what is wrong.
    """
    rates: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        method = name.strip().upper()
        if not sep or method not in METHODS:
            raise ValueError(
                f"{item!r} is not METHOD=CALLS: use e.g. GET=600,POST=200,PUT=200,DELETE=200 "
                f"(methods: {', '.join(METHODS)})"
            )
        if method in rates:
            raise ValueError(f"{method} is given twice")
        try:
            rate = float(value)
        except ValueError:
            raise ValueError(f"{item!r}: {value.strip()!r} is not a number of calls per second") from None
        if not rate > 0 or rate == float("inf"):
            raise ValueError(f"{item!r}: the calls per second must be a positive number")
        rates[method] = rate
    if not rates:
        raise ValueError("names no method: use e.g. GET=600,POST=200,PUT=200,DELETE=200")
    return rates


def budgets(plan: str, rates: str | None) -> dict[str, float]:
    """Calls per second for each method: the plan's, with those ``rates`` names set outright."""
    return {**PLANS[plan], **(parse_rates(rates) if rates else {})}
