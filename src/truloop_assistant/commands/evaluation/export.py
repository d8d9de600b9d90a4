"""The evaluation's results as JSON (``eval --json PATH``): every case, the accuracy per group and overall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .case_files import Request
from .cases import Calls, CaseInfo, EvalReport, Turn
from .harness import CaseResult
from .scoring import Outcome, Score, outcomes, scores


def results_json(
    report: EvalReport, *, model: str, cases: Path, min_accuracy: float | None
) -> dict[str, Any]:
    """The cases in the order of the cases file, each with every call its turn made, and the figures."""
    found = outcomes(report)
    *groups, overall = scores(found)
    return {
        "model": model,
        "cases_file": str(cases),
        "min_accuracy": min_accuracy,
        "groups": [_score(s) for s in groups],
        "overall": _score(overall),
        "cases": [_case(result, outcome) for result, outcome in zip(report.results, found, strict=True)],
    }


def write_results(path: Path, results: dict[str, Any]) -> None:
    """Write :func:`results_json`'s value to ``path`` (UTF-8, indented)."""
    text = json.dumps(results, ensure_ascii=False, indent=2, default=str)
    path.write_text(text + "\n", encoding="utf-8")


def _score(score: Score) -> dict[str, Any]:
    return {"name": score.name, "passed": score.passed, "total": score.total, "percent": score.percent}


def _calls(calls: Calls) -> list[dict[str, Any]]:
    return [
        {"tool": call.tool, "args": call.args, **({"forbidden": True} if call.forbidden else {})}
        for call in calls
    ]


def _case(result: CaseResult[Request, Calls, Turn, CaseInfo], outcome: Outcome) -> dict[str, Any]:
    turn = outcome.turn
    return {
        "entry": result.case.metadata.entry,
        "group": outcome.group,
        "request": result.case.inputs.text,
        "files": [{"kind": file.key, "name": file.name} for file in result.case.inputs.files],
        "expect": _calls(result.case.expected_output),
        "skipped": outcome.skipped,
        "passed": outcome.passed,
        "reason": outcome.reason,
        "calls": _calls(turn.calls) if turn else [],
        "answer": turn.answer if turn else None,
        "ended": turn.ended if turn else outcome.reason,
        "steps": turn.steps if turn else 0,
    }
