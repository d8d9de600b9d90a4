"""Redis URLs: the schemes accepted, and a URL as it may be shown (password masked)."""

from __future__ import annotations

import re

REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
_SECRET_QUERY = re.compile(r"(?i)([?&]password=)[^&#]*")


def masked_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) shown as ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _SECRET_QUERY.sub(r"\1***", url)
    end = min((rest.index(mark) for mark in "?#" if mark in rest), default=len(rest))
    userinfo, at, location = rest[:end].rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return f"{scheme}://{userinfo}{at}{location}" + _SECRET_QUERY.sub(r"\1***", rest[end:])
