"""What a person decided in the server's confirmation dialog, and whether an edit can stand.

The phone answers the gate's ``interaction.confirm`` with a yes (``{"confirmed": true}``), a yes with
changes (``"edited": {name: value}``, names of the dialog's ``editable``), or a no with an optional
``reason``; a yes may add ``"remember": "always"``. An edit is checked where it arrives, against the
dialog the server sent (its ``editable``) and the tool's own rules (an end after its start, the bounds
of :mod:`..protocol.event_times`), so a bad one is refused while the call still waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..protocol.event_times import span_problem
from ..protocol.methods import REMEMBERABLE, ApprovalResult
from ..store.ledger_records import Decision


def decision_of(result: Mapping[str, Any]) -> tuple[Decision, ApprovalResult]:
    """The decision a (checked) approval result says, and the result itself."""
    answer = ApprovalResult.model_validate(result)
    if not answer.confirmed:
        return "refused", answer
    return ("edited" if answer.edited else "approved"), answer


def remembers(tool_name: str, result: Any) -> bool:
    """Whether this answer asks not to be asked again for ``tool_name`` (a yes with ``always``)."""
    if tool_name not in REMEMBERABLE or not isinstance(result, dict):
        return False
    answer = ApprovalResult.model_validate(result)
    return answer.confirmed and answer.remember == "always"


def edit_problem(params: Mapping[str, Any], result: Any) -> str | None:
    """Why the person's changes cannot stand (``where: what``), or None; ``params``: the dialog sent."""
    answer = ApprovalResult.model_validate(result)
    if not answer.confirmed or not answer.edited:
        return None
    fields = {str(f.get("name")): f for f in params.get("editable") or [] if isinstance(f, dict)}
    values: dict[str, Any] = {name: f.get("value") for name, f in fields.items()}
    for name, value in answer.edited.items():
        field = fields.get(name)
        if field is None:
            editable = ", ".join(str(n) for n in fields) or "none"
            return f"result.edited.{name}: not an editable field (editable: {editable})"
        if (problem := _value_problem(field.get("type"), name, value)) is not None:
            return f"result.edited.{name}: {problem}"
        values[name] = value
    if "title" in answer.edited and not str(values["title"]).strip():
        return "result.edited.title: the title cannot be empty"
    return _times_problem(values, edited=answer.edited, now=datetime.now(UTC))


def _value_problem(kind: Any, name: str, value: Any) -> str | None:
    if kind == "datetime":
        if not isinstance(value, str):
            return "expected an ISO 8601 date and time with its offset"
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return f"{value!r} is not an ISO 8601 date and time"
        return None if moment.tzinfo is not None else f"{value!r} has no UTC offset"
    if kind == "users":
        ok = isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        return None if ok else "expected a list of user ids"
    return None if isinstance(value, str) else "expected text"


def _times_problem(values: Mapping[str, Any], *, edited: Mapping[str, Any], now: datetime) -> str | None:
    """The event tools' rule for a span (:func:`..protocol.event_times.span_problem`), checked when a
    time was changed."""
    if not {"start_time", "end_time"} & set(edited):
        return None
    try:
        start = datetime.fromisoformat(str(values.get("start_time")))
        end = datetime.fromisoformat(str(values.get("end_time")))
        problem = span_problem(start, end, now=now)
    except (ValueError, TypeError):  # a time the dialog showed as written: the tool checks it when it runs
        return None
    return None if problem is None else f"result.edited: {problem}"
