"""Runs one turn of a conversation: a new user message, or the resume of a paused run."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import TypeAdapter, ValidationError
from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessagesTypeAdapter,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelTimeoutError,
    ToolDenied,
    ToolFailed,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from ..backends import Backends
from ..channels.base import Channel
from ..deferred.approvals import CONFIRM_METHOD, ApprovalContext, describe_approval
from ..deferred.handlers import HANDLERS, error_to_failure
from ..metrics import TURNS, UNPAIRED_TOOL_CALLS
from ..protocol.jsonrpc import JsonRpcError, JsonRpcRequest
from ..protocol.methods import ConfirmResult
from ..store.turns import CallRef, PausedTurn, TurnStore
from .agents import Agents
from .deps import AgentDeps, _utcnow
from .verify import unpaired_tool_calls

log = logging.getLogger(__name__)

_REQUESTS = TypeAdapter(DeferredToolRequests)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")

TURN_LIMIT_TEXT = {
    "ko": "죄송해요, 이 요청은 한 번에 처리하기 어려웠어요. 조금 더 간단하게 다시 말씀해 주시겠어요?",
    "en": "Sorry, I couldn't finish that in one go. Could you ask again in a simpler way?",
}
# What the user reads when the model cannot answer (AC-902): never silence, never a stack trace.
FAILURE_TEXTS = {
    "timeout": {
        "ko": "요청 시간이 초과되었습니다. 잠시 후 다시 시도해 주세요.",
        "en": "The request timed out. Please try again in a moment.",
    },
    "rate_limited": {
        "ko": "요청 한도를 초과했습니다. 잠시 후 다시 시도해 주세요.",
        "en": "The assistant is over its request limit right now. Please try again in a moment.",
    },
    "server_error": {
        "ko": "서버 오류가 발생했습니다. 잠시 후 다시 시도해 주세요.",
        "en": "Something went wrong on our side. Please try again in a moment.",
    },
}
SUPERSEDED_TEXT = (
    "Superseded: the user sent a new message before their device answered, so this call was "
    "cancelled and did not run. Answer the new message; do not assume this call's result."
)
EXPIRED_TEXT = (
    "Expired: the user's device did not answer in time, so this call did not run. Tell the user and "
    "suggest trying again (for example with the app open)."
)


def failure_kind(exc: BaseException) -> str:
    """Which of the failure texts fits an exception that ended a run."""
    if isinstance(exc, TimeoutError | ModelTimeoutError):
        return "timeout"
    if isinstance(exc, ModelRateLimitError | ModelQuotaExceededError):
        return "rate_limited"
    return "server_error"


@dataclass(frozen=True)
class TurnLimits:
    max_model_requests: int = 8
    """Model requests per run; a looping model ends with a polite answer."""
    model_timeout_s: float = 60.0
    """One model request."""
    turn_timeout_s: float = 180.0
    """One whole run."""
    max_calls_per_turn: int = 8
    """Device calls one step may send; the rest fail at once (the model is told)."""
    max_client_failures: int = 3
    """A device tool that failed this many times in a row in a conversation is not sent again."""


@dataclass(frozen=True)
class InboundMessage:
    """A user's chat message, as queued by the webhook (or the dev channel)."""

    message_id: str
    channel_url: str
    user_id: str
    text: str

    @property
    def turn_id(self) -> str:
        return f"m{self.message_id}"


@dataclass(frozen=True)
class _Turn:
    turn_id: str
    step: int
    channel_url: str
    user_id: str
    prompt: str
    agent: str = "member"


def new_call_id() -> str:
    """A JSON-RPC id: unique across conversations and not guessable."""
    return "call_" + secrets.token_hex(16)


def language_of(text: str) -> str:
    return "ko" if _HANGUL.search(text) else "en"


class TurnRunner:
    def __init__(
        self,
        *,
        agents: Agents,
        store: TurnStore,
        channel: Channel,
        timezone: ZoneInfo,
        backends: Backends | None = None,
        limits: TurnLimits | None = None,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.agents = agents
        self.backends = backends
        self.store = store
        self.channel = channel
        self.timezone = timezone
        self.clock = clock
        self.limits = limits or TurnLimits()
        self.usage_limits = UsageLimits(request_limit=self.limits.max_model_requests)

    async def handle_message(self, message: InboundMessage) -> None:
        """Answer a user message (or pause for the device). Safe to run again for the same message."""
        snapshot = await self.store.load_turn(message.channel_url, message.turn_id)
        if snapshot is not None:
            # A re-delivered job: the turn already ran up to a pause; make sure the device heard.
            if snapshot.state == "paused":
                await self._send_requests(snapshot.turn)
            return
        role = await self._role(message.user_id)
        turn = _Turn(message.turn_id, 0, message.channel_url, message.user_id, message.text, role)
        active = await self.store.active_turn(message.channel_url)
        if active is not None and await self._supersede(turn, active):
            return
        history = await self.store.load_history(message.channel_url)
        await self._run(turn, history, prompt=message.text)

    async def _supersede(self, turn: _Turn, active_id: str) -> bool:
        """The user wrote while a turn waited for the device: close that turn, then answer.

        Returns True when the new message was answered on top of the cut turn.
        """
        snapshot = await self.store.load_turn(turn.channel_url, active_id)
        if snapshot is None:
            return False
        if snapshot.state == "paused" and await self.store.supersede(snapshot.turn):
            # Answers that arrived before the cut count; the rest are reported as superseded.
            snapshot = await self.store.load_turn(turn.channel_url, active_id) or snapshot
            results = _results(snapshot.turn, snapshot.answers, missing=SUPERSEDED_TEXT)
            history = ModelMessagesTypeAdapter.validate_json(snapshot.turn.messages)
            await self._run(turn, history, prompt=turn.prompt, results=results)
            return True
        # Every call was answered just before the new message: finish that turn first.
        await self.resume(turn.channel_url, active_id)
        return False

    async def resume(self, channel_url: str, turn_id: str) -> None:
        """Resume a paused run once every call of its turn has an answer."""
        snapshot = await self.store.load_turn(channel_url, turn_id)
        if snapshot is None or snapshot.state != "resuming":
            return
        paused = snapshot.turn
        # Calls without an answer here expired: the device did not answer in time.
        results = _results(paused, snapshot.answers, missing=EXPIRED_TEXT)
        await self.store.record_client_outcomes(channel_url, _device_outcomes(paused, snapshot.answers))
        turn = _Turn(turn_id, paused.step + 1, channel_url, paused.user_id, paused.prompt, paused.agent)
        await self._run(turn, ModelMessagesTypeAdapter.validate_json(paused.messages), results=results)

    async def _run(
        self,
        turn: _Turn,
        history: list[ModelMessage],
        *,
        prompt: str | None = None,
        results: DeferredToolResults | None = None,
    ) -> None:
        deps = AgentDeps(
            user_id=turn.user_id,
            channel_url=turn.channel_url,
            timezone=self.timezone,
            clock=self.clock,
            backends=self.backends,
        )
        agent = self.agents.guest if turn.agent == "guest" else self.agents.member
        try:
            async with asyncio.timeout(self.limits.turn_timeout_s):
                result = await agent.run(
                    prompt,
                    message_history=history,
                    deferred_tool_results=results,
                    deps=deps,
                    usage_limits=self.usage_limits,
                    model_settings={"timeout": self.limits.model_timeout_s},
                )
        except UsageLimitExceeded:
            log.warning("turn %s in %s hit the model request limit", turn.turn_id, turn.channel_url)
            await self._give_up(turn, TURN_LIMIT_TEXT)
            return
        except (Exception, TimeoutError) as exc:
            kind = failure_kind(exc)
            log.exception("turn %s in %s failed (%s)", turn.turn_id, turn.channel_url, kind)
            TURNS.labels(kind).inc()
            await self._give_up(turn, FAILURE_TEXTS[kind])
            return

        output = result.output
        pending = output if isinstance(output, DeferredToolRequests) else None
        if unpaired := unpaired_tool_calls(result.all_messages(), pending):
            UNPAIRED_TOOL_CALLS.inc(len(unpaired))
            log.warning(
                "turn %s in %s: tool calls without a result: %s",
                turn.turn_id,
                turn.channel_url,
                [(c.tool_name, c.tool_call_id) for c in unpaired],
            )
        if isinstance(output, DeferredToolRequests):
            await self._pause(turn, result.all_messages_json().decode(), output)
            return
        await self.channel.send_text(turn.channel_url, output, dedup_id=f"{turn.turn_id}:{turn.step}:answer")
        await self.store.finish(
            turn.channel_url, result.all_messages(), turn_id=turn.turn_id if turn.step else None
        )

    async def _pause(self, turn: _Turn, messages: str, requests: DeferredToolRequests) -> None:
        refs = [
            CallRef(
                call_id=new_call_id(),
                tool_call_id=part.tool_call_id,
                bucket="call",
                tool_name=part.tool_name,
                method=HANDLERS[part.tool_name].method,
            )
            for part in requests.calls
        ] + [
            CallRef(
                call_id=new_call_id(),
                tool_call_id=part.tool_call_id,
                bucket="approval",
                tool_name=part.tool_name,
                method=CONFIRM_METHOD,
            )
            for part in requests.approvals
        ]
        local = await self._answer_locally(turn.channel_url, refs)
        paused = PausedTurn(
            turn_id=turn.turn_id,
            step=turn.step,
            channel_url=turn.channel_url,
            user_id=turn.user_id,
            created_at=time.time(),
            prompt=turn.prompt,
            agent=turn.agent,
            messages=messages,
            requests=_REQUESTS.dump_json(requests).decode(),
            calls=refs,
            local_answers=local,
        )
        await self.store.save_paused(paused)
        if len(local) == len(refs):  # nothing to wait for: go on at once
            await self.resume(turn.channel_url, turn.turn_id)
            return
        await self._send_requests(paused)

    async def _answer_locally(self, channel_url: str, refs: list[CallRef]) -> dict[str, str]:
        """Device calls the server fails itself: over the per-turn limit, or failing again and again."""
        failures = await self.store.client_failures(channel_url)
        answers: dict[str, str] = {}
        sent = 0
        for ref in refs:
            if ref.bucket != "call":
                continue
            reason = None
            if failures.get(ref.tool_name, 0) >= self.limits.max_client_failures:
                reason = (
                    f"{ref.tool_name} failed {failures[ref.tool_name]} times in a row on the user's device, "
                    "so it was not sent again. Do not call it again now; tell the user what went wrong "
                    "and what to do."
                )
            elif sent >= self.limits.max_calls_per_turn:
                reason = (
                    f"Too many device calls in one step (at most {self.limits.max_calls_per_turn}); this one "
                    "was not sent. Ask for less at once."
                )
            else:
                sent += 1
            if reason:
                answers[ref.call_id] = json.dumps({"failed": reason})
        return answers

    async def _send_requests(self, paused: PausedTurn) -> None:
        requests = _REQUESTS.validate_json(paused.requests)
        parts = {p.tool_call_id: p for p in [*requests.calls, *requests.approvals]}
        context = ApprovalContext(
            language=language_of(paused.prompt),
            timezone=self.timezone,
            backends=self.backends,
            user_id=paused.user_id,
        )
        for ref in paused.calls:
            if ref.call_id in paused.local_answers:
                continue
            part = parts[ref.tool_call_id]
            if ref.bucket == "approval":
                params = await describe_approval(part, context)
                notification = params["title"]
            else:
                params = HANDLERS[ref.tool_name].create_params(part)
                notification = str(part.args_as_dict().get("notification_message") or "")
            request = JsonRpcRequest(id=ref.call_id, method=ref.method, params=params)
            await self.channel.send_rpc(
                paused.channel_url,
                request,
                notification=notification,
                dedup_id=f"{paused.turn_id}:{paused.step}:{ref.call_id}",
            )

    async def _role(self, user_id: str) -> str:
        """'member' for people in the directory, 'guest' for everyone else (invited guests).

        With no directory at all (nothing imported, no users API) everyone is a member.
        """
        users = self.backends.users if self.backends else None
        if users is None or await users.is_member(user_id) or not await users.has_users():
            return "member"
        return "guest"

    async def _give_up(self, turn: _Turn, texts: dict[str, str]) -> None:
        """End the turn with a short apology instead of silence, keeping the history valid."""
        text = texts[language_of(turn.prompt)]
        await self.channel.send_text(turn.channel_url, text, dedup_id=f"{turn.turn_id}:{turn.step}:answer")
        history = await self.store.load_history(turn.channel_url)
        history += [
            ModelRequest(parts=[UserPromptPart(turn.prompt)]),
            ModelResponse(parts=[TextPart(text)]),
        ]
        await self.store.finish(turn.channel_url, history, turn_id=turn.turn_id if turn.step else None)


def _results(paused: PausedTurn, answers: dict[str, str], *, missing: str) -> DeferredToolResults:
    """Results for a paused turn, built only from the calls the server stored.

    A client cannot move an answer between buckets or answer a call the server did not issue.
    Calls without an answer get ``missing`` as their failure (when the turn is cut short).
    """
    requests = _REQUESTS.validate_json(paused.requests)
    calls: dict[str, Any] = {}
    approvals: dict[str, Any] = {}
    for ref in paused.calls:
        raw = answers.get(ref.call_id)
        if ref.bucket == "approval":
            approvals[ref.tool_call_id] = _approval_value(json.loads(raw)) if raw else ToolDenied(missing)
        else:
            calls[ref.tool_call_id] = _call_value(ref, json.loads(raw)) if raw else ToolFailed(missing)
    return requests.build_results(calls=calls, approvals=approvals)


def _device_outcomes(paused: PausedTurn, answers: dict[str, str]) -> dict[str, bool]:
    """Per tool, whether the device succeeded (answers the server made itself do not count)."""
    outcomes: dict[str, bool] = {}
    for ref in paused.calls:
        raw = answers.get(ref.call_id)
        if ref.bucket == "call" and raw is not None and ref.call_id not in paused.local_answers:
            ok = "error" not in json.loads(raw)
            outcomes[ref.tool_name] = outcomes.get(ref.tool_name, True) and ok
    return outcomes


def _call_value(ref: CallRef, answer: dict[str, Any]) -> Any:
    if "failed" in answer:
        return ToolFailed(answer["failed"])
    if "error" in answer:
        return error_to_failure(JsonRpcError.model_validate(answer["error"]))
    handler = HANDLERS[ref.tool_name]
    try:
        return handler.transform_result(handler.validate_result(answer["result"]))
    except ValidationError:  # checked at the edge already; stay safe if the schema changed since
        return ToolFailed(f"the device sent a result {ref.method} does not accept")


def _approval_value(answer: dict[str, Any]) -> bool | ToolDenied:
    if "error" in answer:
        failure = error_to_failure(JsonRpcError.model_validate(answer["error"]))
        return ToolDenied(f"The user did not confirm: {failure.message}")
    if ConfirmResult.model_validate(answer["result"]).confirmed:
        return True
    return ToolDenied("The user declined in the confirmation dialog; the action was not performed.")
