"""Rate-limit strings such as ``20/minute``."""

from __future__ import annotations


def parse_limit(value: str) -> object:
    """A rate such as ``20/minute`` as a ``limits`` item (raises ValueError when it is not one)."""
    from limits import parse

    return parse(value)
