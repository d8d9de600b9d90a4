"""How much work checking a value against a declared schema would take, told before it is checked.

A check costs at most about the schema's cost times the values it covers (``MAX_CHECK_WORK``:
0.5-0.8 s at worst on a 2-core machine, measured on an ``anyOf`` of 1,000 ``const`` branches, the
slowest keyword per step), and its patterns at most about their work per character times the
characters they may be matched against (``MAX_MATCH_WORK``). A value past either is refused unchecked.

Checks run on the event loop, each bounded so. Neither a thread nor a time limit would do better:
the validator holds the GIL while it compiles and matches, so a thread stalls the loop all the same,
and a check cut short in another process would still have cost the machine its time (and each
answer a process's round trip). Bounded work keeps every check short for everyone, whoever declared
the schema.
"""

from __future__ import annotations

from typing import Any

from .schema_limits import MAX_PATTERN_INPUT, SchemaBounds

MAX_CHECK_WORK = 2_000_000
"""A schema's cost times the values one check covers (a 2,048-cost schema checks up to ~1,000 values)."""
MAX_MATCH_WORK = 2_000_000
"""A schema's pattern work times the characters of the strings one check may match (strings and
field names up to ``MAX_PATTERN_INPUT``): about a tenth of a second at worst, measured at about 50 ns
per character and unit of cost for ``a[ab]{100}c`` against strings of a's and b's that each match only
at their end (the engine's lazy DFA gives up on it and tracks every position)."""


def check_work(bounds: SchemaBounds, instance: Any) -> str | None:
    """Why checking ``instance`` against a schema of these bounds would be too much work, or None."""
    budget = MAX_CHECK_WORK // max(bounds.cost, 1)
    chars = MAX_MATCH_WORK // bounds.pattern_work if bounds.pattern_work else None
    measured = _Measure(instance, budget, chars)
    if measured.values > budget:
        return (
            f"too large to check against the declared schema: a schema of its size takes at most "
            f"{budget} values (numbers, strings, items and fields)"
        )
    if bounds.names_matched and measured.longest_name > MAX_PATTERN_INPUT:
        return (
            f"a field name of {measured.longest_name} characters: the declared schema's patternProperties "
            f"are matched against names of at most {MAX_PATTERN_INPUT} characters"
        )
    if chars is not None and measured.chars > chars:
        return (
            f"too large to check against the declared schema's patterns: they are matched against at most "
            f"{chars} characters in all, in strings and field names of up to {MAX_PATTERN_INPUT} characters"
        )
    return None


class _Measure:
    """How many JSON values ``instance`` holds, and the characters of its strings and field names a
    pattern may be matched against; counting stops once past ``values`` or ``chars``."""

    def __init__(self, instance: Any, values: int, chars: int | None) -> None:
        self.values = self.chars = self.longest_name = 0
        stack = [instance]
        while stack and self.values <= values and (chars is None or self.chars <= chars):
            value = stack.pop()
            self.values += 1
            if isinstance(value, str):
                self._matched(value)
            elif isinstance(value, dict):
                for name in value:
                    self._matched(name)
                    self.longest_name = max(self.longest_name, len(name))
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)

    def _matched(self, text: str) -> None:
        if len(text) <= MAX_PATTERN_INPUT:
            self.chars += len(text)
