"""Scoring a case: were the expected tools called, with the key arguments; accuracy per group."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

from .cases import Calls, CaseInfo, EvalReport, ToolCall


def value_matches(expected: object, actual: object) -> bool:
    """Whether an argument's value has an expected key value (see the README's "Evaluation")."""
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


@dataclass
class ToolSelection(Evaluator[str, Calls, CaseInfo]):
    """Every expected tool was called (other calls are allowed); a case that expects no tool, none."""

    def get_default_evaluation_name(self) -> str:
        return "tools"

    def evaluate(self, ctx: EvaluatorContext[str, Calls, CaseInfo]) -> EvaluationReason:
        expected = {c.tool for c in ctx.expected_output or []}
        called = {c.tool for c in ctx.output}
        if (expected and not expected <= called) or (not expected and called):
            return EvaluationReason(False, f"expected {_names(expected)}, called {_names(called)}")
        return EvaluationReason(True)


@dataclass
class KeyArguments(Evaluator[str, Calls, CaseInfo]):
    """Each expected call of a tool that was called has a call with all of its key arguments."""

    def get_default_evaluation_name(self) -> str:
        return "arguments"

    def evaluate(self, ctx: EvaluatorContext[str, Calls, CaseInfo]) -> EvaluationReason:
        for expected in ctx.expected_output or []:
            calls = [c for c in ctx.output if c.tool == expected.tool]
            if calls and not any(call_matches(expected, c) for c in calls):
                got = "; ".join(shown(c.args) for c in calls)
                return EvaluationReason(False, f"{expected.tool}: expected {shown(expected.args)}, got {got}")
        return EvaluationReason(True)


def shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# -- running the agent


@dataclass(frozen=True)
class Outcome:
    """How one case went."""

    group: str
    request: str
    passed: bool
    reason: str = ""


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
    found: list[tuple[int, Outcome]] = []
    for case in report.cases:
        failed = [r for r in case.assertions.values() if not r.value]
        reasons = [r.reason or r.name for r in failed] + [f.error_message for f in case.evaluator_failures]
        found.append(_outcome(case.metadata, case.inputs, not reasons, "; ".join(reasons)))
    for failure in report.failures:
        reason = f"the run failed: {(failure.error_message.strip().splitlines() or ['?'])[0]}"
        found.append(_outcome(failure.metadata, failure.inputs, False, reason))
    return [outcome for _, outcome in sorted(found, key=lambda item: item[0])]


def _outcome(info: CaseInfo | None, request: str, passed: bool, reason: str) -> tuple[int, Outcome]:
    outcome = Outcome(group=info.group if info else "", request=request, passed=passed, reason=reason)
    return (info.entry if info else -1), outcome


def scores(results: Iterable[Outcome]) -> list[Score]:
    """One score per group (in order of first appearance), then the overall one."""
    groups: dict[str, list[bool]] = {}
    for result in results:
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


# -- the command
