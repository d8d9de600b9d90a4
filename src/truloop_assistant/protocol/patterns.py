"""What one ``pattern`` of a declared schema costs: to compile, and per character of each string it
is matched against.

Patterns run on the linear-time engine (Rust's ``regex``: no look-around, no back-references), whose
work grows with the size of the automaton a pattern compiles to. A Unicode class is tens of
kilobytes of it (every script's letters, as UTF-8), and a counted repetition copies what it repeats:
``\\p{L}{150}\\p{N}{150}z`` takes tens of milliseconds to compile and, when the lazy DFA gives up on an
automaton that size, seconds to reject a long string. Even a small pattern such as ``a.{100}c``
keeps the engine tracking a hundred positions on every character of a string full of ``a``. So a
pattern's cost is read from its text, without compiling it: each atom it matches costs by its kind
(``LITERAL``, ``ANY``, ``UNICODE``), times the counted repetitions around it (``{n}``, ``{n,m}``;
``*``, ``+`` and ``?`` repeat without copying), alternatives adding up. The cost bounds the compiled
size (about a kilobyte per unit at most) and so the compile time (about 10 µs per unit at most),
and the matching work per character (about 50 ns per unit on the slowest inputs measured, see
``MAX_MATCH_WORK`` in :mod:`.check_work`).

A pattern is refused when it is longer than ``MAX_PATTERN_LENGTH``, counts a repetition past
``MAX_REPEAT``, or costs more than ``MAX_PATTERN_COST``; longer runs are written ``+`` or ``*``, with
``maxLength`` beside them. Costs are kept per pattern text, computed once per process.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_PATTERN_LENGTH = 256
"""Characters a declared pattern may have."""
MAX_REPEAT = 100
"""The largest count a counted repetition (``{n}``, ``{n,}``, ``{n,m}``) may give."""
MAX_PATTERN_COST = 1024
"""What one pattern may cost (see the module): ``\\p{L}{16}``, ``.{100}`` twice, 1,024 literals."""
LITERAL = 1
"""A character, or a class of ASCII characters (``[a-z]``, ``\\d``, ``\\w``)."""
ANY = 4
"""A class reaching past ASCII: ``.``, a negated class, ``\\S``, ``\\D``, ``\\W``, ``\\s``, ``[가-힣]``."""
UNICODE = 64
"""A Unicode property (``\\p{L}``, ``\\P{N}``), or a class with one: each is tens of kilobytes compiled."""

_COUNTED = re.compile(r"\{(\d+)(,(\d*))?\}")
_PROPERTY = re.compile(r"[pP](\{[^}]*\}|[A-Za-z])")
_WIDE_ESCAPES = frozenset("DWSs")
_SKIPPED = {"u": re.compile(r"u(\{[0-9A-Fa-f]+\}|[0-9A-Fa-f]{4})"), "x": re.compile(r"x([0-9A-Fa-f]{2})")}


@lru_cache(maxsize=4096)
def pattern_cost(pattern: str) -> int | str:
    """The pattern's cost, or why it is refused (a sentence naming the pattern and what to change)."""
    shown = pattern if len(pattern) <= 64 else f"{pattern[:60]}…"
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f'pattern "{shown}" is longer than {MAX_PATTERN_LENGTH} characters; write a shorter one'
    scan = _Scan(pattern)
    try:
        cost = scan.cost()
    except _TooMany as exc:
        return (
            f'pattern "{shown}": the counted repetition {exc} is over {MAX_REPEAT} '
            f"(at most {{0,{MAX_REPEAT}}}); for longer runs use + or * and bound the length with maxLength"
        )
    if cost > MAX_PATTERN_COST:
        return (
            f'pattern "{shown}" costs {cost} to check, at most {MAX_PATTERN_COST}: each character it matches '
            f"costs {LITERAL}, any character (., a negated class, \\S) {ANY}, a Unicode class (\\p{{…}}) "
            f"{UNICODE}, times the counted repetitions around it; repeat with + or * and bound the length "
            "with maxLength instead"
        )
    return cost


class _TooMany(Exception):
    """A counted repetition past ``MAX_REPEAT``; the message is the repetition as written."""


class _Scan:
    """One reading of a pattern: ``frames`` holds, per open group, the cost of what is done and of
    the last atom (which a quantifier may still multiply)."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.frames: list[list[int]] = [[0, 0]]

    def cost(self) -> int:
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                self._atom(self._escape())
            elif char == "[":
                self._atom(self._class())
            elif char == ".":
                self._atom(ANY)
            elif char in "^$":
                self._atom(0)
            elif char == "(":
                self.frames.append([0, 0])
            elif char == ")" and len(self.frames) > 1:
                done, last = self.frames.pop()
                self._atom(done + last)
            elif char == "|":
                frame = self.frames[-1]
                frame[0], frame[1] = frame[0] + frame[1], 0
            elif char in "*+?":
                pass  # repeats without copying (a lazy ? after a quantifier too)
            elif char == "{" and (counted := _COUNTED.match(self.text, self.at - 1)):
                self.at = counted.end()
                self.frames[-1][1] *= self._times(counted)
            else:
                self._atom(LITERAL)
        while len(self.frames) > 1:  # unclosed: the engine refuses the pattern anyway
            done, last = self.frames.pop()
            self._atom(done + last)
        return sum(self.frames[0])

    def _atom(self, cost: int) -> None:
        frame = self.frames[-1]
        frame[0], frame[1] = frame[0] + frame[1], cost

    def _times(self, counted: re.Match[str]) -> int:
        """The copies a counted repetition compiles to: ``{n}`` n, ``{n,m}`` m, ``{n,}`` n and a loop."""
        low, high = int(counted[1]), int(counted[3]) if counted[3] else None
        if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
            raise _TooMany(counted[0])
        if counted[2] is None:
            return low
        return low + 1 if high is None else high

    def _escape(self) -> int:
        if self.at >= len(self.text):
            return LITERAL
        char = self.text[self.at]
        if prop := _PROPERTY.match(self.text, self.at):
            self.at = prop.end()
            return UNICODE
        if (skipped := _SKIPPED.get(char)) and (escape := skipped.match(self.text, self.at)):
            self.at = escape.end()
            return LITERAL if int(escape[1].strip("{}") or "0", 16) < 0x80 else ANY
        self.at += 1
        return ANY if char in _WIDE_ESCAPES else LITERAL

    def _class(self) -> int:
        """A bracket class, from after its ``[``; ``]`` right after ``[`` or ``[^`` ends it (ECMA-262)."""
        cost = ANY if self.text.startswith("^", self.at) else LITERAL
        self.at += cost == ANY
        while self.at < len(self.text) and self.text[self.at] != "]":
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                cost = max(cost, self._escape())
            elif ord(char) >= 0x80:
                cost = max(cost, ANY)
        self.at += 1
        return cost
