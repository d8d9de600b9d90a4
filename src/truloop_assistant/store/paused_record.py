"""A paused run as kept in its turn's hash: compressed JSON."""

from __future__ import annotations

import zlib

from .records import PausedTurn


def encode_record(turn: PausedTurn) -> bytes:
    """A paused run as kept in Redis: its JSON, compressed (mostly the run's messages, about 4× smaller)."""
    return zlib.compress(turn.model_dump_json().encode(), 6)


def decode_record(raw: bytes) -> PausedTurn:
    """The paused run from :func:`encode_record`."""
    return PausedTurn.model_validate_json(zlib.decompress(raw))
