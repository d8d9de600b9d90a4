"""Text from others shown as it is: isolated from the words around it, and free of characters that
do not show.

A name or id quoted in a sentence may carry right-to-left letters or bidi controls (U+202E
RIGHT-TO-LEFT OVERRIDE and the like) that would reorder the rest of the sentence, so that a dialog
reads as something else; wrapped in U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE,
it keeps its own direction and leaves the sentence alone (Unicode bidi rule X6a: the closing isolate
ends every embedding and override opened inside). An id must not hold characters that do not show
at all (controls, format characters such as zero-width spaces and bidi controls, fillers): two ids
that look the same would be two people.
"""

from __future__ import annotations

import unicodedata

FIRST_STRONG_ISOLATE = "\u2068"
POP_DIRECTIONAL_ISOLATE = "\u2069"

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Controls, format characters (zero-width, bidi controls and isolates, soft hyphen, tags),
surrogates, private use, unassigned, and line and paragraph separators."""

_BLANK = frozenset(
    "\u00a0\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
"""Letters, marks and spaces that show as nothing or as a blank indistinguishable from another:
no-break and typographic spaces, the combining grapheme joiner, Hangul and Khmer fillers,
Mongolian variation selectors, the braille blank."""


def isolate(text: str) -> str:
    """``text`` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE; empty stays empty."""
    return f"{FIRST_STRONG_ISOLATE}{text}{POP_DIRECTIONAL_ISOLATE}" if text else text


def is_hidden(char: str) -> bool:
    """Whether one character does not show (or shows as a blank other than a plain space)."""
    if char in _BLANK or "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef":
        return True
    return unicodedata.category(char) in _HIDDEN_CATEGORIES


def hidden_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` that do not show, in order of first appearance."""
    return list(dict.fromkeys(c for c in text if is_hidden(c)))


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a character as a reader can look it up."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}".rstrip()


def escaped(text: str) -> str:
    """``text`` with each character that does not show written as ``\\u202e`` (so it can be seen)."""
    return "".join(
        (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if is_hidden(c) else c for c in text
    )
