"""Texts longer than a channel takes, sent as consecutive messages, each once.

Sendbird refuses a ``message`` longer than the application's ``max_message_length`` (5,000
characters unless changed). A longer text is cut at a paragraph break, else at the end of a
sentence, else between words (else anywhere), each part within the limit, the whitespace at a cut
left out. Each part has a ``dedup_id`` of its own derived from the text's: a text sent again sends
the same parts under the same ids, and the channel shows each of them once.

Length is counted in UTF-16 code units (what a JavaScript ``length`` counts): a character outside the
Basic Multilingual Plane (most emoji) counts twice, so a part is within the limit however Sendbird
counts.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from .base import ChannelSendError

DEFAULT_MAX_CHARS = 5000
"""Sendbird's default ``max_message_length``."""

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"[.!?…][\"'”’)\]]*\s+|[。！？][」』”’）)]*\s*")
_WORD = re.compile(r"\s+")


def units(text: str) -> int:
    """The text's length in UTF-16 code units."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def split_text(text: str, max_chars: int) -> list[str]:
    """The text in consecutive parts of at most ``max_chars`` (UTF-16 code units); one part when it fits."""
    parts: list[str] = []
    rest = text
    while True:
        part, rest = first_part(rest, max_chars)
        if part or not parts:
            parts.append(part)
        if not rest:
            return parts


def first_part(text: str, max_chars: int) -> tuple[str, str]:
    """The text's first part within ``max_chars`` and what follows it ("" when the text fits).

    Parts are cut from the start, so the parts of what follows are the text's next parts.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if units(text) <= max_chars:
        return text, ""
    end, start = _cut(text, len(_fitting(text, max_chars)))
    return text[:end].rstrip(), text[start:].lstrip()


def part_dedup_id(dedup_id: str, index: int) -> str:
    """The ``dedup_id`` of a text's part (``index`` from 0)."""
    return f"{dedup_id}:{index + 1}"


async def send_in_parts(
    send: Callable[[str, str], Awaitable[object]], text: str, *, dedup_id: str, max_chars: int
) -> None:
    """Send ``text`` with ``send(part, dedup_id)``, in parts when it is longer than ``max_chars``.

    A part the channel refuses as one it already has (a repeat of a send that got through) counts as
    sent, and the next part follows.
    """
    parts = split_text(text, max_chars)
    if len(parts) == 1:
        await send(text, dedup_id)
        return
    for index, part in enumerate(parts):
        try:
            await send(part, part_dedup_id(dedup_id, index))
        except ChannelSendError as exc:
            if not exc.already_delivered:
                raise


def _fitting(text: str, max_chars: int) -> str:
    """The longest start of ``text`` within ``max_chars`` UTF-16 code units."""
    end = min(len(text), max_chars)
    while units(text[:end]) > max_chars:
        end -= 1
    if 0 < end < len(text) and "\udc00" <= text[end] <= "\udfff":
        end -= 1  # never between the halves of a surrogate pair passed through as they are
    return text[:end]


def _cut(text: str, limit: int) -> tuple[int, int]:
    """Where the first part of ``text`` ends and the next begins: after the last paragraph break within
    ``limit`` characters, else the last sentence end, else the last space (paragraphs and sentences
    only from half of the limit on, so no part is needlessly short), else at ``limit``."""
    for pattern, floor in ((_PARAGRAPH, limit // 2), (_SENTENCE, limit // 2), (_WORD, 1)):
        best: tuple[int, int] | None = None
        for m in pattern.finditer(text, 0, limit + 1):
            end = m.start() + len(m.group().rstrip())  # a sentence keeps its mark and closing quote
            if max(floor, 1) <= end <= limit:
                best = (end, m.end())
        if best is not None:
            return best
    return limit, limit
