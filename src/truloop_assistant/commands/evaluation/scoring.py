"""Scoring a case: were the expected tools called, with the key arguments, in a turn that ended with an
answer; accuracy per group, of the cases played (a skipped case counts in none)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cases import Calls, EvalReport, ToolCall, Turn
from .harness import Evaluator, Verdict


def value_matches(expected: object, actual: object) -> bool:
    """Whether an argument's value has an expected key value (see docs/evaluation.md, "Cases files")."""
    if expected is None:
        return actual is None
    if isinstance(expected, list):
        return all(value_matches(item, actual) for item in expected)
    if isinstance(actual, list):
        return any(value_matches(expected, item) for item in actual)
    if isinstance(expected, str):
        return actual is not None and expected.casefold() in str(actual).casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return expected == actual


def call_matches(expected: ToolCall, actual: ToolCall) -> bool:
    """Whether a call is of the expected tool and has all of its key arguments."""
    return expected.tool == actual.tool and all(
        value_matches(value, actual.args.get(arg)) for arg, value in expected.args.items()
    )


def _names(tools: Iterable[str]) -> str:
    return ", ".join(sorted(set(tools))) or "no tool"


class ToolSelection(Evaluator[Calls, Turn]):
    """Every expected tool was called in the turn (others may be too, but not a forbidden one); a
    case that expects no tool, none."""

    name = "tools"

    def evaluate(self, expected: Calls, output: Turn) -> Verdict:
        wanted = {c.tool for c in expected if not c.forbidden}
        forbidden = {c.tool for c in expected if c.forbidden}
        called = {c.tool for c in output.calls}
        if (wanted and not wanted <= called) or (not wanted and not forbidden and called):
            return Verdict(False, f"expected {_names(wanted)}, called {_names(called)}")
        if called & forbidden:
            return Verdict(False, f"called {_names(called & forbidden)}, which the case forbids")
        return Verdict(True)


class KeyArguments(Evaluator[Calls, Turn]):
    """Each expected call of a tool that was called has a call with all of its key arguments."""

    name = "arguments"

    def evaluate(self, expected: Calls, output: Turn) -> Verdict:
        for call in expected:
            if call.forbidden:
                continue
            calls = [c for c in output.calls if c.tool == call.tool]
            if calls and not any(call_matches(call, c) for c in calls):
                got = "; ".join(shown(c.args) for c in calls)
                return Verdict(False, f"{call.tool}: expected {shown(call.args)}, got {got}")
        return Verdict(True)


class Answered(Evaluator[Calls, Turn]):
    """The turn ended with an answer, not out of budget or still asking the phone."""

    name = "answer"

    def evaluate(self, expected: Calls, output: Turn) -> Verdict:
        if output.answer is None:
            return Verdict(False, f"no answer: {output.ended}")
        return Verdict(True)


def shown(value: object) -> str:
    """A value as JSON, as the report shows requests and arguments."""
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Outcome:
    """How one case went."""

    group: str
    request: str
    """The request as the report shows it: its words, then its files (``[picture poster.png]``)."""
    passed: bool
    reason: str = ""
    turn: Turn | None = None
    """What the request led to; None when its run failed or it was skipped."""
    skipped: bool = False
    """Not played here (``reason`` says why): neither passed nor failed."""


@dataclass(frozen=True)
class Score:
    """Cases passed out of cases run, for a group or overall."""

    name: str
    passed: int
    total: int

    @property
    def percent(self) -> int:
        """The accuracy in whole percent, halves rounded up."""
        return (200 * self.passed + self.total) // (2 * self.total) if self.total else 0


def outcomes(report: EvalReport) -> list[Outcome]:
    """Each case of the report, in the order of the cases file; a case whose run failed did not pass."""
    found = []
    for result in report.results:
        request = result.case.inputs.shown
        if result.skipped is not None:
            found.append(Outcome(result.case.metadata.group, request, False, result.skipped, skipped=True))
            continue
        if result.error is not None:
            reasons = [f"the run failed: {(result.error.strip().splitlines() or ['?'])[0]}"]
        else:
            reasons = result.failures
        found.append(
            Outcome(
                result.case.metadata.group,
                request,
                not reasons,
                "; ".join(reasons),
                result.output,
            )
        )
    return found


def scores(results: Iterable[Outcome]) -> list[Score]:
    """One score per group (in order of first appearance), then the overall one; of the cases played."""
    groups: dict[str, list[bool]] = {}
    for result in results:
        if not result.skipped:
            groups.setdefault(result.group, []).append(result.passed)
    every = [p for passed in groups.values() for p in passed]
    return [Score(g, sum(p), len(p)) for g, p in groups.items()] + [Score("overall", sum(every), len(every))]


def render(table: Sequence[Score]) -> list[str]:
    """The score lines, e.g. ``time     7/8   88 %``, aligned."""
    name_width = max(len(s.name) for s in table)
    count_width = max(len(f"{s.passed}/{s.total}") for s in table)
    return [
        f"{s.name:<{name_width}}  {f'{s.passed}/{s.total}':>{count_width}}  {s.percent:>3} %" for s in table
    ]
