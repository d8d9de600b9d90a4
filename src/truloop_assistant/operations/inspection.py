"""What an operator sees of one conversation: its turns and their tool calls with their results (the
ledger), the calls still waiting for the phone with their time left, the events waiting in its
inbox and the drain that owns it, what waits in its outbox and why it did not go out, what admission
decided of its recent messages, the last step that failed, and the events given up after their
retries.
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
from .waiting import DEFAULT_MAX_CHARS, Waiting, read_waiting


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
    waiting: Waiting

    @property
    def known(self) -> bool:
        now = self.waiting
        return bool(
            self.turns
            or self.pending
            or self.inbox
            or self.last_failure
            or self.dead_letters
            or now.delivery.waiting
            or now.admissions
        )


async def conversation_report(
    redis: Redis, ledger: Ledger, channel_url: str, *, max_message_chars: int = DEFAULT_MAX_CHARS
) -> ConversationReport:
    """What is known of the conversation (``max_message_chars``: the channel's, to count a long
    answer's parts)."""
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
        waiting=await read_waiting(redis, channel_url, max_message_chars=max_message_chars),
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
        "drain": _drain_json(report.waiting),
        "outbox": _outbox_json(report.waiting),
        "admissions": [_timed(a) for a in report.waiting.admissions],
    }


def _drain_json(now: Waiting) -> dict[str, Any] | None:
    return None if now.drain is None else {**now.drain.model_dump(), "since": iso(now.drain.since)}


def _outbox_json(now: Waiting) -> dict[str, Any]:
    delivery = now.delivery
    return {
        "waiting": [{**m.model_dump(), "since": iso(m.since)} for m in delivery.waiting],
        "failures": delivery.failures,
        "last_error": _timed(delivery.last_error),
        "next_try_at": iso(delivery.next_try_at),
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
    lines.append(f"  worker: {_drain_text(report)}")
    lines.append(f"  inbox: {len(report.inbox)} waiting")
    lines.extend(f"    {json.dumps(e)}" for e in report.inbox)
    lines.extend(_outbox_text(report.waiting))
    lines.extend(_admissions_text(report.waiting))
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
        fallback = f" ({turn.fallback_requests} by a fallback)" if turn.fallback_requests else ""
        model = f", last by {turn.model}" if turn.model else ""
        lines.append(
            f"  {turn.turn_id}  {turn.user_id}  {turn.state}  {iso(turn.started_at)}{took}  "
            f"{turn.model_requests} model requests{fallback}{model}, "
            f"{turn.input_tokens} in / {turn.output_tokens} out tokens"
        )
        if len(turn.message_ids) > 1:  # several messages in a row, answered as one turn
            lines.append(f"    answers {len(turn.message_ids)} messages: {', '.join(turn.message_ids)}")
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


def _drain_text(report: ConversationReport) -> str:
    drain = report.waiting.drain
    if drain is None:
        return report.owner or "none (idle)"
    lease = drain.lease_expires_in_s
    text = drain.owner + (f" on {drain.worker}" if drain.worker else "")
    text += "" if drain.since is None else f"  since {iso(drain.since)}"
    text += "" if lease is None else f"  lease expires in {lease:g} s"
    return text + ("  waiting for a phone's answer" if drain.waiting_for_device else "")


def _outbox_text(now: Waiting) -> list[str]:
    delivery = now.delivery
    lines = [f"  outbox: {len(delivery.waiting)} waiting to be delivered"]
    if delivery.waiting and delivery.failures:
        lines[0] += f", {delivery.failures} failed deliveries in a row"
    if delivery.waiting and delivery.next_try_at is not None:
        lines[0] += f", next try {iso(delivery.next_try_at)} ({_from_now(delivery.next_try_at)})"
    for m in delivery.waiting:
        part = "" if not m.part else f" part{'s' if '-' in m.part else ''} {m.part}"
        detail = f"  {m.detail}" if m.detail else ""
        lines.append(f"    {m.kind}{part}  {m.dedup_id}  since {iso(m.since)}{detail}")
    if delivery.waiting and (error := delivery.last_error) is not None:
        said = ", ".join(
            f"{name} {error[name]}" for name in ("status", "code") if error.get(name) is not None
        )
        lines.append(
            f"    last error {iso(error.get('at'))}  {error.get('dedup_id')}: "
            f"{said + ': ' if said else ''}{error.get('error')}"
        )
    return lines


ADMISSION_DECISIONS = {
    "queued": "queued: its turn runs",
    "undecided": "queued; the worker looks the channel up to know whether it is for the assistant",
    "not_addressed": "not for the assistant (a group message without a mention); kept as context",
    "duplicate": "a re-delivery of a message already taken (a re-sent webhook)",
    "too_long": "refused: longer than TRULOOP_MAX_MESSAGE_CHARS (the sender was told)",
    "rate_limited": "refused: the sender is over the rate limit (told once per window)",
    "dropped": "refused: too many messages wait in the conversation's inbox",
    "too_old": "ignored: sent longer ago than a re-delivery is remembered (a replayed delivery?)",
    "from_bot": "ignored: the assistant's own message",
    "edited": "edited by its sender (a waiting turn takes the new text; a run one, its history)",
    "deleted": "deleted by its sender (a waiting turn is dropped; a run one leaves history)",
}
"""What each admission decision means, as ``inspect`` shows it."""


def _admissions_text(now: Waiting) -> list[str]:
    lines = [f"  admission decisions, newest first: {len(now.admissions)}"]
    for entry in now.admissions:
        decision = str(entry.get("decision"))
        lines.append(
            f"    {iso(entry.get('at'))}  {decision}  user {entry.get('user_id')}  "
            f"message {entry.get('message_id')}  ({ADMISSION_DECISIONS.get(decision, '?')})"
        )
    return lines


def _from_now(at: float) -> str:
    left = at - datetime.now(UTC).timestamp()
    return f"in {left:.0f} s" if left > 0 else f"due {-left:.0f} s ago"
