"""What a turn's steps write in the tool-call ledger, and the verifier of its tool calls.

The calls themselves, as ledger entries, are made in :mod:`.ledger_calls`. The verifier flags a
call that ended its run without a result, and an answer given while one of the turn's calls was
still pending; both are logged and counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from pydantic_ai import RunUsage

from ..metrics import TOOL_CALL_SECONDS, TOOL_CALLS, VERIFIER_FLAGS
from ..store.answers import Answer
from ..store.ledger import CallStatus, Ledger, LedgerCall, LedgerTurn, TurnState
from ..store.reads import Batch, Write
from ..store.records import PausedTurn
from ..tools import tool_names
from ..tools.callbacks import ToolCallbacks, ToolEvent
from .answering import Answers
from .ledger_calls import settled_calls

log = logging.getLogger("truloop_assistant.ledger")


@dataclass(frozen=True)
class StepRecord:
    """What one step of a turn did, as the ledger keeps it."""

    turn_id: str
    channel_url: str
    user_id: str
    started_at: float
    state: TurnState
    usage: RunUsage
    calls: list[LedgerCall]
    message_ids: tuple[str, ...] = ()
    """The messages the turn answers (empty: the record keeps those it noted)."""
    answers: Answers = field(default_factory=Answers)
    """Which models answered the step's model requests (the turn's earlier steps are in its record)."""


@dataclass(frozen=True)
class KnownRecord:
    """A turn's ledger record as a step found it (None: there was none), when it was read along with
    the step's other reads or written by the step itself: the step's end need not read it again."""

    record: LedgerTurn | None


class ToolLabels:
    """The ``tool`` label of a call's metrics, from a bounded set: the name of a tool the server
    defines or an MCP server offers, ``declared`` for a device tool an app declared, ``unknown`` for
    a name the model made up. Apps and models name tools freely; a label per name they choose would
    grow the metrics without bound."""

    def __init__(self, offered: Callable[[], Collection[str]]) -> None:
        self.builtin = tool_names()
        self.offered = offered

    def __call__(self, call: LedgerCall) -> str:
        if call.tool in self.builtin or call.tool in self.offered():
            return call.tool
        return "declared" if call.kind == "device" and call.flag != "invalid" else "unknown"


class LedgerWriter:
    """Writes steps into the ledger and counts the calls they ended; never fails a turn."""

    def __init__(
        self, ledger: Ledger | None, callbacks: ToolCallbacks | None = None, *, labels: ToolLabels
    ) -> None:
        self.ledger = ledger
        self.callbacks = callbacks
        self.labels = labels

    def read_record(self, batch: Batch, channel_url: str, turn_id: str) -> Callable[[], KnownRecord | None]:
        """Add the turn's record to ``batch``'s reads; the returned function gives it once it has run
        (None without a ledger)."""
        if self.ledger is None:
            return lambda: None
        slot = batch.add(self.ledger.read(channel_url, turn_id))
        return lambda: KnownRecord(slot.value)

    async def step(self, step: StepRecord, *, ended: bool, known: KnownRecord | None = None) -> Write | None:
        """Merge a step's calls into its turn's record; ``ended``: the turn answered or gave up;
        ``known``: the record as the step found it, when it knows. Returns the record's write, for
        the step's own transaction (None without a ledger, or when it could not be made)."""
        if self.ledger is None:
            self._announce(None, step.calls, step.turn_id, step.channel_url, step.user_id)
            return None
        try:
            if known is None:
                before = await self.ledger.load(step.channel_url, step.turn_id)
            else:
                before = known.record
            self._announce(before, step.calls, step.turn_id, step.channel_url, step.user_id)
            record = before or LedgerTurn(
                turn_id=step.turn_id, user_id=step.user_id, state=step.state, started_at=step.started_at
            )
            merged = record.with_calls(step.calls)
            _count(record, step.calls, self.labels)
            if step.state == "answered":
                merged = self._verify(step, merged)
            merged = merged.model_copy(
                update={
                    "state": step.state,
                    "ended_at": time.time() if ended else None,
                    "model_requests": step.usage.requests,
                    "input_tokens": step.usage.input_tokens,
                    "output_tokens": step.usage.output_tokens,
                    # A step is recorded once: its write goes in the transaction that ends it.
                    "model": step.answers.last or record.model,
                    "fallback_requests": record.fallback_requests + step.answers.fallbacks,
                    "message_ids": list(step.message_ids) or record.message_ids,
                }
            )
            return self.ledger.save_write(step.channel_url, merged)
        except Exception:  # the ledger is for operators: a turn never fails for it
            log.exception("could not record turn %s of %s in the ledger", step.turn_id, step.channel_url)
            return None

    async def settle(
        self,
        channel_url: str,
        turn_id: str,
        calls_of: _Settle,
        *,
        state: TurnState,
        known: KnownRecord | None = None,
        batch: Batch | None = None,
    ) -> KnownRecord | None:
        """The paused calls of a turn end (answered, expired or superseded); returns the turn's record
        as written (None when it could not be). ``known``: the record as the caller found it;
        ``batch``: where the record's write goes, to be sent with the caller's next reads."""
        user_id = calls_of.paused.user_id
        if self.ledger is None:
            self._announce(None, calls_of(None), turn_id, channel_url, user_id)
            return None
        try:
            record = known.record if known is not None else await self.ledger.load(channel_url, turn_id)
            calls = calls_of(record)
            self._announce(record, calls, turn_id, channel_url, user_id)
            if record is None:
                return KnownRecord(None)
            _count(record, calls, self.labels)
            ended = time.time() if state == "superseded" else record.ended_at
            merged = record.with_calls(calls).model_copy(update={"state": state, "ended_at": ended})
            if batch is None:
                await self.ledger.save(channel_url, merged)
            else:
                batch.write(self.ledger.save_write(channel_url, merged))
            return KnownRecord(merged)
        except Exception:
            log.exception("could not record the calls of turn %s of %s in the ledger", turn_id, channel_url)
            return None

    def _announce(
        self, before: LedgerTurn | None, calls: list[LedgerCall], turn_id: str, channel_url: str, user_id: str
    ) -> None:
        """Tell the callbacks about device and approval calls sent or ended now (server calls are told
        about by the tool wrappers as they run; a step run again tells nothing twice)."""
        if not self.callbacks:
            return
        for call in calls:
            if call.kind == "server":
                continue
            prior = before.call(call.call_id) if before else None
            if prior is not None and prior.status != "pending":
                continue
            if prior is None:
                sent = call.model_copy(
                    update={
                        "status": "pending",
                        "error": None,
                        "ended_at": None,
                        "duration_ms": None,
                        "result": None,
                        "result_cut": False,
                    }
                )
                self.callbacks.started(ToolEvent(sent, turn_id, channel_url, user_id))
            if call.status != "pending":
                self.callbacks.ended(ToolEvent(call, turn_id, channel_url, user_id))

    def _verify(self, step: StepRecord, record: LedgerTurn) -> LedgerTurn:
        """An answer while one of the turn's calls is still pending: flagged, logged and counted."""
        flagged = []
        for call in record.calls:
            if call.status == "pending":
                flagged.append(call.model_copy(update={"flag": "answered_while_pending"}))
                VERIFIER_FLAGS.labels("answered_while_pending").inc()
                log.warning(
                    "turn %s in %s answered while %s (%s) was pending",
                    step.turn_id,
                    step.channel_url,
                    call.tool,
                    call.call_id,
                )
        return record.with_calls(flagged)


class _Settle:
    """Builds the settled calls from the turn's record (a callable, so the record is read once)."""

    def __init__(self, paused: PausedTurn, answers: dict[str, Answer], *, missing: CallStatus) -> None:
        self.paused = paused
        self.answers = answers
        self.missing = missing

    def __call__(self, record: LedgerTurn | None) -> list[LedgerCall]:
        return settled_calls(self.paused, self.answers, record, missing=self.missing, now=time.time())


def settling(paused: PausedTurn, answers: dict[str, Answer], *, missing: CallStatus) -> _Settle:
    return _Settle(paused, answers, missing=missing)


def _count(record: LedgerTurn, calls: list[LedgerCall], labels: ToolLabels) -> None:
    """Count the calls that end now (not those a step run again had ended already)."""
    for call in calls:
        before = record.call(call.call_id)
        if call.status == "pending" or (before is not None and before.status != "pending"):
            continue
        status = "invalid" if call.flag == "invalid" else call.status
        tool = labels(call)
        TOOL_CALLS.labels(tool, call.kind, status).inc()
        if call.flag == "no_result":
            VERIFIER_FLAGS.labels("no_result").inc()
        if call.duration_ms is not None and call.flag is None:
            TOOL_CALL_SECONDS.labels(tool, call.kind).observe(call.duration_ms / 1000)
