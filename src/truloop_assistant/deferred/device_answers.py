"""Recording a device's JSON-RPC answer to a deferred call, and what becomes of it.

The rules, in their order: an unknown call; another user's call, whatever its state (only the
call's own user learns what became of it); a call that expired, was superseded or was cancelled; an
answer given already (the same one: a duplicate; another one: a conflict); a result that does not
fit the method's schema; a device that cannot run the method (-32601: the call waits for another of
the user's devices); and the answer that settles the turn's last call (it resumes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..protocol.jsonrpc import ErrorCode, JsonRpcFailure, JsonRpcSuccess
from ..store.answers import DeviceError, answer_of
from ..store.records import CallView
from ..store.standing_approvals import allow_always
from ..store.turns import TurnStore
from .decisions import edit_problem, remembers
from .handlers import result_problem
from .resumes import ResumeQueue, resume_if_due

DeviceAnswer = JsonRpcSuccess | JsonRpcFailure


class AnswerFollowUps(ResumeQueue, Protocol):
    """What an answer sets going: the turn's resume, or the delivery of its request's update."""

    async def deliver(self, channel_url: str) -> None: ...


@dataclass(frozen=True)
class Accepted:
    """Recorded; ``remaining`` calls and approvals of the turn still wait."""

    remaining: int


@dataclass(frozen=True)
class Resuming:
    """Recorded, and it was the turn's last: the turn's resume is queued."""


@dataclass(frozen=True)
class Duplicate:
    """The same answer again: nothing to do."""


RefusalReason = Literal[
    "unknown_call",
    "not_your_call",
    "call_expired",
    "call_superseded",
    "call_cancelled",
    "already_answered",
    "invalid_result",
]


@dataclass(frozen=True)
class Refused:
    """The answer is not taken; ``message`` says why, for people."""

    reason: RefusalReason
    message: str


AnswerOutcome = Accepted | Resuming | Duplicate | Refused


class DeviceAnswers:
    """Records the answers the user's devices send to the calls of their paused turns."""

    def __init__(self, store: TurnStore, follow_ups: AnswerFollowUps, *, unhandled_wait_s: float) -> None:
        self.store = store
        self.follow_ups = follow_ups
        self.unhandled_wait_s = unhandled_wait_s
        """How long a call a device could not run (-32601) waits for another device."""

    async def record(self, user_id: str, answer: DeviceAnswer) -> AnswerOutcome:
        """Record ``user_id``'s device's answer; what became of it."""
        return await self.record_in(
            await self.store.call_tag_read(answer.call_id).once(self.store.redis), user_id, answer
        )

    async def record_in(self, tag: str | None, user_id: str, answer: DeviceAnswer) -> AnswerOutcome:
        """:meth:`record`, the call's conversation already read (``TurnStore.call_tag_read``)."""
        call = await self.store.call_in(tag, answer.call_id)
        if call is None:
            return _unknown(answer.call_id)
        if call.user_id != user_id:
            # Before any state: another user learns nothing of what became of the call.
            return Refused("not_your_call", "this call belongs to another user")
        fingerprint = answer.fingerprint()
        if call.state in ("expired", "superseded") or (
            call.state == "cancelled" and call.fingerprint != fingerprint
        ):
            return _gone(call)
        if call.state in ("answered", "cancelled"):
            if call.fingerprint != fingerprint:
                return _conflict()
            # The first try may have failed before it queued the resume: it is queued again.
            await resume_if_due(self.store, self.follow_ups, call.channel_url, call.turn_id)
            return Duplicate()
        if (problem := _result_problem(call, answer)) is not None:
            return Refused("invalid_result", f"the result does not fit {call.method}: {problem}")
        return await self._settle(call, fingerprint, answer)

    async def _settle(self, call: CallView, fingerprint: str, answer: DeviceAnswer) -> AnswerOutcome:
        if isinstance(answer, JsonRpcFailure) and answer.error.code == ErrorCode.METHOD_NOT_FOUND:
            # This device cannot do it; another of the user's devices may: the call waits a while for it.
            outcome, remaining = await self.store.note_unhandled(
                call, fingerprint, DeviceError(error=answer.error), wait_s=self.unhandled_wait_s
            )
            settled = False
        else:
            outcome, remaining = await self.store.record_answer(call, fingerprint, answer_of(answer))
            settled = True
            if outcome in ("accepted", "resume") and call.bucket == "approval":
                await self._remember(call, answer)
        if outcome == "accepted":
            if settled:  # the request's message is updated on every device
                await self.follow_ups.deliver(call.channel_url)
            return Accepted(remaining)
        if outcome == "resume":  # this answer moved the turn to resuming: its resume is queued
            await self.follow_ups.resume(call.channel_url, call.turn_id)
            return Resuming()
        if outcome == "duplicate":  # the same answer came in a moment ago
            return Duplicate()
        if outcome == "conflict":  # another answer came in a moment ago
            return _conflict()
        if outcome == "gone":  # its deadline passed, or the user wrote again, since it was read
            return _gone(await self.store.get_call(call.call_id) or call)
        return Refused("unknown_call", f"no call with id {call.call_id!r} is pending")

    async def _remember(self, call: CallView, answer: DeviceAnswer) -> None:
        """A yes with ``"remember": "always"``: the person is not asked again for calls like this one,
        within the scope the dialog offered (none offered: nothing is remembered)."""
        offer = call.request.params.get("always")
        scope = offer.get("scope") if isinstance(offer, dict) else None
        if (
            isinstance(scope, dict)
            and isinstance(answer, JsonRpcSuccess)
            and remembers(call.tool_name, answer.result)
        ):
            await allow_always(self.store.redis, call.user_id, call.tool_name, scope)


def _unknown(call_id: str) -> Refused:
    return Refused("unknown_call", f"no call with id {call_id!r} is known")


def _conflict() -> Refused:
    return Refused("already_answered", "this call was already answered with a different response")


def _gone(call: CallView) -> Refused:
    if call.state == "cancelled":
        return Refused(
            "call_cancelled",
            f"call {call.call_id} was cancelled: a device could not run {call.method} and no other "
            "device answered in time",
        )
    # Only a newer message supersedes a call; any other way out of pending is its deadline.
    if call.state == "superseded":
        return Refused(
            "call_superseded", f"call {call.call_id} has superseded; its result is no longer needed"
        )
    return Refused("call_expired", f"call {call.call_id} has expired; its result is no longer needed")


def _result_problem(call: CallView, answer: DeviceAnswer) -> str | None:
    if isinstance(answer, JsonRpcFailure):
        return None
    problem = result_problem(
        tool_name=call.tool_name, bucket=call.bucket, result_schema=call.result_schema, data=answer.result
    )
    if problem is None and call.bucket == "approval":  # changes must fit the dialog and the tool's rules
        return edit_problem(call.request.params, answer.result)
    return problem
