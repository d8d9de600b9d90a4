"""How many SMS segments a text takes, counted as carriers count them, and a text cut to fit.

A text whose every character is in the GSM 03.38 default alphabet goes as GSM-7: 160 septets in one
segment, 153 a segment once it takes more (the rest of each carries the header that joins the parts).
A character of the alphabet's extension table (``[]{}\\~^|€`` and form feed) takes two septets (an
escape and the character), and the pair is never split between two segments. Any other character
(any Korean, an emoji) makes the whole text UCS-2: 70 UTF-16 code units in one segment, 67 a segment
beyond; a character outside the Basic Multilingual Plane (most emoji) takes two units, a surrogate
pair that is never split either.
"""

from __future__ import annotations

import re
from typing import Literal

Encoding = Literal["GSM-7", "UCS-2"]

GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
"""The GSM 03.38 default alphabet (its escape, 0x1B, is no character of its own): one septet each."""
GSM7_EXTENSION = frozenset("\f^{}\\[~]|€")
"""The default alphabet's extension table: an escape and the character, two septets each."""

SINGLE: dict[Encoding, int] = {"GSM-7": 160, "UCS-2": 70}
"""What one segment holds when the text takes only one: septets, or UTF-16 code units."""
MULTIPART: dict[Encoding, int] = {"GSM-7": 153, "UCS-2": 67}
"""What each segment holds when the text takes several (the rest carries the joining header)."""
ELLIPSIS: dict[Encoding, str] = {"GSM-7": "...", "UCS-2": "…"}
"""What ends a shortened text: "…" is not in the GSM-7 alphabet, and would make a GSM-7 text UCS-2."""

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s)|\n")
_SPACE = re.compile(r"\s")
KEEP_AT_LEAST = 0.5
"""A cut at a sentence (else a word) is taken only if it keeps this share of what would fit."""


def encoding(text: str) -> Encoding:
    """``GSM-7`` when every character is in the GSM 03.38 alphabet (basic or extension), else ``UCS-2``."""
    return "GSM-7" if all(c in GSM7_BASIC or c in GSM7_EXTENSION for c in text) else "UCS-2"


def _units(text: str, enc: Encoding) -> list[int]:
    """What each character costs: septets in GSM-7, UTF-16 code units in UCS-2."""
    if enc == "GSM-7":
        return [2 if c in GSM7_EXTENSION else 1 for c in text]
    return [2 if ord(c) > 0xFFFF else 1 for c in text]


def segments(text: str) -> int:
    """How many segments carriers bill ``text`` as (an empty text still takes one)."""
    enc = encoding(text)
    units = _units(text, enc)
    if sum(units) <= SINGLE[enc]:
        return 1
    size, count, used = MULTIPART[enc], 1, 0
    for cost in units:
        if used + cost > size:  # an escape pair or a surrogate pair starts the next segment whole
            count, used = count + 1, 0
        used += cost
    return count


def excess(text: str, max_segments: int) -> int:
    """How many septets (GSM-7) or code units (UCS-2) ``text`` goes past ``max_segments`` segments;
    0 or less when it fits."""
    if segments(text) <= max_segments:
        return 0
    enc = encoding(text)
    return max(1, sum(_units(text, enc)) - MULTIPART[enc] * max_segments)


def fit(text: str, max_segments: int) -> str:
    """``text`` as it is when it takes at most ``max_segments``; else cut at the last sentence that
    fits (else the last word, else anywhere) and ended with an ellipsis of the text's own encoding
    ("..." for a GSM-7 text, "…" for a UCS-2 one), so that the cut never changes how it is counted."""
    if max_segments < 1:
        raise ValueError("max_segments must be at least 1")
    if segments(text) <= max_segments:
        return text
    ellipsis = ELLIPSIS[encoding(text)]
    room = _longest_prefix(text, ellipsis, max_segments)
    cut = _boundary(text, room)
    for end, joiner in ((cut, " " if cut < room and _ends_sentence(text, cut) else ""), (room, "")):
        candidate = text[:end].rstrip() + joiner + ellipsis if text[:end].strip() else ellipsis
        if segments(candidate) <= max_segments:
            return candidate
    return ellipsis  # unreachable: an ellipsis alone is one segment, and the hard cut fits by search


def _longest_prefix(text: str, ellipsis: str, max_segments: int) -> int:
    """The most characters of ``text`` that fit with ``ellipsis`` after them (segments only grow as
    characters are added: a binary search)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if segments(text[:mid] + ellipsis) <= max_segments:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _boundary(text: str, room: int) -> int:
    """Where to cut within the first ``room`` characters: after the last sentence, else before the
    last word, when either keeps ``KEEP_AT_LEAST`` of the room; else at ``room`` itself."""
    if room < len(text) and _SPACE.match(text[room]):
        return room  # the cut falls on a space already: a whole word ends there
    floor = room * KEEP_AT_LEAST
    sentences = [m.end() for m in _SENTENCE_END.finditer(text, 0, room)]
    if sentences and sentences[-1] >= floor:
        return sentences[-1]
    spaces = [m.start() for m in _SPACE.finditer(text, 0, room)]
    if spaces and spaces[-1] >= floor:
        return spaces[-1]
    return room


def _ends_sentence(text: str, end: int) -> bool:
    return end > 0 and text[end - 1] in ".!?。！？"
