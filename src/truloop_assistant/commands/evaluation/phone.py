"""The evaluation's phone: it answers a paused run as the user's phone would, so the turn goes on.

Its calendar holds the /dev page's sample events (``팀 미팅`` at 10:00, ``Lunch with Mina`` at
12:00) on every day of the asked range, in the user's time zone; it confirms every dialog (the
confirmation gate's) and answers any other built-in device tool with the example result it is
declared with (``confirm_interaction``: yes; ``get_permission_status``: granted); the user's app
has declared no tools of its own. The answers become the run's results through the server's own code,
from the calls the server would have sent, so a model meets in the evaluation what it meets in a turn.
"""

from __future__ import annotations

import re
import time as clock
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ToolCallPart

from ...agent.paused_calls import call_refs, failed_locally
from ...agent.results import EXPIRED_TEXT, REQUESTS, deferred_results
from ...deferred.handlers import device_params
from ...protocol.device_methods import DEVICE_METHODS, device_method_for
from ...protocol.jsonrpc import ErrorCode, JsonRpcError
from ...store.answers import Answer, DeviceError, DeviceResult
from ...store.records import CallRef, PausedTurn

SAMPLE_DAY = (("팀 미팅", time(10), time(11)), ("Lunch with Mina", time(12), time(13)))
"""The phone calendar's events on every day (title, start, end in the user's zone), as on the /dev page."""
MAX_DAYS = 14
"""Days of a range the sample calendar fills: a year's range gets two weeks of events, not 730."""
CALENDAR_METHOD = DEVICE_METHODS["get_calendar_events"].method
CONFIRMED = {"confirmed": True}


def sample_calendar(start_date: str, end_date: str, zone: ZoneInfo) -> dict[str, Any]:
    """The ``calendar.getEvents`` result for a range: the sample events that overlap it."""
    start, end = datetime.fromisoformat(start_date), datetime.fromisoformat(end_date)
    first, last = start.astimezone(zone).date(), end.astimezone(zone).date()
    events = []
    for day in (first + timedelta(days=n) for n in range(min((last - first).days + 1, MAX_DAYS))):
        for number, (title, begins, ends) in enumerate(SAMPLE_DAY, start=1):
            event_start, event_end = _at(day, begins, zone), _at(day, ends, zone)
            if event_start < end and event_end > start:
                events.append(
                    {
                        "id": f"sample-{day:%Y%m%d}-{number}",
                        "title": title,
                        "start": {"dateTime": event_start.isoformat()},
                        "end": {"dateTime": event_end.isoformat()},
                    }
                )
    return {"events": events}


def _at(day: date, at: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, at, tzinfo=zone)


def device_answer(
    ref: CallRef,
    part: ToolCallPart,
    zone: ZoneInfo,
    decision: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Answer:
    """What the phone answers one call (sent as ``ref``): a result, or -32601 for a method it lacks.

    ``decision``: how the person answers the confirmation gate's dialogs (a yes by default);
    ``metadata``: what the tool deferred the call with."""
    if ref.bucket == "approval" and decision is not None:
        return DeviceResult(result=_decided(decision, part, zone))
    if ref.bucket == "approval":
        return DeviceResult(result=CONFIRMED)
    if ref.method == CALENDAR_METHOD:
        params = device_params(part, metadata)
        return DeviceResult(result=sample_calendar(params["startDate"], params["endDate"], zone))
    if (tool := device_method_for(ref.method)) is not None:
        return DeviceResult(result=dict(tool.example))
    return DeviceError(error=JsonRpcError(code=ErrorCode.METHOD_NOT_FOUND, message="Method not found"))


def _decided(decision: Mapping[str, Any], part: ToolCallPart, zone: ZoneInfo) -> dict[str, Any]:
    """The case's answer for this call: an edited time given as ``HH:MM`` falls on the call's own day."""
    edited = decision.get("edited")
    if not isinstance(edited, dict):
        return dict(decision)
    start = part.args_as_dict().get("start_time")
    try:
        day = datetime.fromisoformat(str(start)).astimezone(zone).date()
    except ValueError:
        return dict(decision)
    at = {
        name: datetime.combine(day, time.fromisoformat(value), tzinfo=zone).isoformat()
        if isinstance(value, str) and _CLOCK.fullmatch(value)
        else value
        for name, value in edited.items()
    }
    return {**decision, "edited": at}


_CLOCK = re.compile(r"\d{2}:\d{2}")


@dataclass(frozen=True)
class Phone:
    """The user's phone in the evaluation, and the server's limits on what one step may ask of it."""

    user_id: str
    zone: ZoneInfo
    max_calls: int
    """Device calls one step may send (``TRULOOP_MAX_CALLS_PER_TURN``); the rest fail at once."""
    max_failures: int

    def answer(
        self,
        requests: DeferredToolRequests,
        *,
        prompt: str,
        step: int,
        decision: Mapping[str, Any] | None = None,
    ) -> DeferredToolResults:
        """The results a paused run resumes with, once the phone answered every call it was sent
        (``decision``: the person's answer to the confirmation dialogs, when not a plain yes)."""
        refs = call_refs(requests)  # no app-declared tools: only the built-in methods go out
        # The phone never fails a call, so no tool is held back for failing again and again.
        failed = failed_locally(refs, {}, max_calls=self.max_calls, max_failures=self.max_failures)
        paused = PausedTurn(
            turn_id="eval",
            step=step,
            channel_url="eval",
            user_id=self.user_id,
            created_at=clock.time(),
            prompt=prompt,
            messages="[]",  # the results are built from the requests alone
            requests=REQUESTS.dump_json(requests).decode(),
            calls=refs,
            local_answers=failed,
        )
        parts = {part.tool_call_id: part for part in [*requests.calls, *requests.approvals]}
        answers: dict[str, Answer] = dict(failed)
        for ref in paused.sent_calls:
            answers[ref.call_id] = device_answer(
                ref, parts[ref.tool_call_id], self.zone, decision, requests.metadata.get(ref.tool_call_id)
            )
        return deferred_results(paused, answers, missing=EXPIRED_TEXT)
