"""What an operator sees of one conversation: its turns and their tool calls with their results (the
ledger), the calls still waiting for the phone with their time left, the events waiting in its
inbox, the last step that failed, and the events given up after their retries.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import BaseModel
from redis.asyncio import Redis

from ..store import keys
from ..store.ledger import DeadLetter, Ledger, LedgerTurn
from .terminal import json_text, printable


class PendingCall(BaseModel):
    call_id: str
    tool: str
    kind: str
    turn_id: str
    user_id: str
    expires_in_s: float
    """Until the call expires (the run then resumes without its answer)."""


class ConversationReport(BaseModel):
    channel_url: str
    turns: list[LedgerTurn]
    pending: list[PendingCall]
    inbox: list[dict[str, Any]]
    """Events waiting to run, oldest first (kind, user, and for a message its length, not its text)."""
    owner: str | None
    """The worker draining the conversation now, if any."""
    last_failure: dict[str, Any] | None
    dead_letters: list[dict[str, Any]]

    @property
    def known(self) -> bool:
        return bool(self.turns or self.pending or self.inbox or self.last_failure or self.dead_letters)


async def conversation_report(redis: Redis, ledger: Ledger, channel_url: str) -> ConversationReport:
    tag = keys.conversation_tag(channel_url)
    turns = await ledger.turns(channel_url)
    waiting = [
        (turn, call)
        for turn in turns
        for call in turn.calls
        if call.status == "pending" and call.kind != "server"
    ]
    pending = []
    async with redis.pipeline(transaction=False) as pipe:
        for _, call in waiting:
            pipe.hget(keys.pending(tag, call.call_id), "expires_at")
        expiries = cast(list[bytes | None], await pipe.execute()) if waiting else []
    now = datetime.now(UTC).timestamp()
    for (turn, call), expires in zip(waiting, expiries, strict=True):
        if expires is None:
            continue  # settled meanwhile, or gone
        pending.append(
            PendingCall(
                call_id=call.call_id,
                tool=call.tool,
                kind=call.kind,
                turn_id=turn.turn_id,
                user_id=turn.user_id,
                expires_in_s=round(max(0.0, float(expires) - now), 1),
            )
        )
    raw_inbox = cast(list[bytes], await redis.lrange(keys.inbox(tag), 0, keys.INBOX_MAX))
    owner = cast(bytes | None, await redis.get(keys.owner(tag)))
    return ConversationReport(
        channel_url=channel_url,
        turns=turns,
        pending=pending,
        inbox=[_event_summary(raw) for raw in raw_inbox],
        owner=owner.decode() if owner else None,
        last_failure=await ledger.last_failure(channel_url),
        dead_letters=[dead_letter_summary(d) for d in await ledger.dead_letters(channel_url)],
    )


def dead_letter_summary(dead: DeadLetter) -> dict[str, Any]:
    """A dead letter without what the person wrote: its id, when, the event's kind and ids, the error
    (and the channel's error code, for a message it refused)."""
    summary = {"id": dead.id, "at": dead.at, "event": _event_summary(dead.event), "error": dead.error}
    return summary if dead.code is None else {**summary, "code": dead.code}


def _event_summary(raw: bytes | str) -> dict[str, Any]:
    """An inbox event (or an outgoing message) without what the person wrote (or the text said)."""
    try:
        event = json.loads(raw)
    except ValueError:
        return {"unreadable": True}
    if not isinstance(event, dict):
        return {"unreadable": True}
    named = ("kind", "eid", "user_id", "turn_id", "message_id", "dedup_id", "part")
    summary = {k: event[k] for k in named if k in event}
    if isinstance(event.get("text"), str):
        summary["chars"] = len(event["text"])
    return summary


def iso(at: float | None) -> str | None:
    """A ledger time (Unix seconds) as ISO 8601 in UTC, to the millisecond."""
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")


def as_json(report: ConversationReport) -> dict[str, Any]:
    """The report as the admin endpoint and ``inspect --json`` give it (times ISO 8601, UTC)."""
    return {
        "channel_url": report.channel_url,
        "turns": [_turn(t) for t in report.turns],
        "pending": [p.model_dump() for p in report.pending],
        "inbox": report.inbox,
        "owner": report.owner,
        "last_failure": _timed(report.last_failure),
        "dead_letters": [_timed(d) for d in report.dead_letters],
    }


def _turn(turn: LedgerTurn) -> dict[str, Any]:
    body = turn.model_dump(mode="json")
    body["started_at"], body["ended_at"] = iso(turn.started_at), iso(turn.ended_at)
    body["calls"] = [
        {**c.model_dump(mode="json"), "started_at": iso(c.started_at), "ended_at": iso(c.ended_at)}
        for c in turn.calls
    ]
    return body


def _timed(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if entry is None else {**entry, "at": iso(entry.get("at"))}


def as_text(report: ConversationReport) -> str:
    """The report for a person at a terminal (one line per entry, control characters escaped)."""
    lines = [f"conversation {report.channel_url}"]
    lines.append(f"  worker: {report.owner or 'none (idle)'}")
    lines.append(f"  inbox: {len(report.inbox)} waiting")
    lines.extend(f"    {json.dumps(e)}" for e in report.inbox)
    lines.append(f"  pending calls: {len(report.pending)}")
    for p in report.pending:
        lines.append(
            f"    {p.call_id}  {p.tool} ({p.kind})  turn {p.turn_id}  user {p.user_id}  "
            f"expires in {p.expires_in_s:g} s"
        )
    if (failure := report.last_failure) is not None:
        lines.append(
            f"  last failure: {iso(failure.get('at'))}  event {failure.get('event')}: {failure.get('error')}"
        )
    lines.append(f"  dead letters: {len(report.dead_letters)}")
    for dead in report.dead_letters:
        lines.append(f"    {dead['id']}  {iso(dead['at'])}  {json.dumps(dead['event'])}: {dead['error']}")
    lines.append(f"turns, newest first: {len(report.turns)}")
    for turn in report.turns:
        took = "" if turn.ended_at is None else f" → {iso(turn.ended_at)}"
        lines.append(
            f"  {turn.turn_id}  {turn.user_id}  {turn.state}  {iso(turn.started_at)}{took}  "
            f"{turn.model_requests} model requests, {turn.input_tokens} in / {turn.output_tokens} out tokens"
        )
        for call in turn.calls:
            ms = "" if call.duration_ms is None else f"  {call.duration_ms:g} ms"
            error = f"  {call.error}" if call.error else ""
            flag = f"  [{call.flag}]" if call.flag else ""
            lines.append(f"    {call.call_id}  {call.tool}  {call.kind}  {call.status}{ms}{error}{flag}")
            if call.result is not None or call.result_cut:
                lines.append(f"      → {_short(call.result, cut=call.result_cut)}")
    return "\n".join(printable(line) for line in lines)


RESULT_SHOWN = 120
"""``inspect`` shows a result's JSON up to this many characters (``--json`` shows all that is kept)."""


def _short(result: Any, *, cut: bool) -> str:
    """A result on one line: its JSON text, shortened; ``[cut]`` when the ledger kept only part of it."""
    if result is None:
        return "(left out: the turn's results were too large) [cut]"
    text = result if isinstance(result, str) else json_text(result, indent=None)
    text = " ".join(text.split())
    if len(text) > RESULT_SHOWN:
        text = text[:RESULT_SHOWN] + "…"
    return text + (" [cut]" if cut else "")
