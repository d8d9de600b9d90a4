"""Runs one turn of a conversation: a new user message, or the resume of a paused run.

A run ends in one of three ways: an answer, a pause (the device calls are stored), or a failure
(the user gets a short apology instead). Whatever it sends goes to the conversation's outbox in the
same transaction that records the step and takes its event off the inbox: the model runs once per
step, and delivery (retried for as long as the channel is down) is the drain's job.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessagesTypeAdapter,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelTimeoutError,
    RunUsage,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from ..backends import Backends
from ..backends.users import UserDirectoryError, UserProfile
from ..channels.base import InboundMessage
from ..config import Settings
from ..deferred.approvals import ApprovalContext
from ..i18n import Text, language_of, texts
from ..logs import log_context
from ..metrics import TURN_SECONDS, TURNS, UNPAIRED_TOOL_CALLS
from ..protocol.declarations import DeclaredTool
from ..store.device_declarations import ClientTools
from ..store.effects import Effects
from ..store.history import History, dump_messages
from ..store.inbox import Consumed
from ..store.ledger import Ledger, LedgerCall, TurnState
from ..store.outbox import TextOut
from ..store.records import AgentRole, PausedTurn
from ..store.transcript import Transcript
from ..store.turns import TurnStore
from ..tools.callbacks import ToolCallbacks
from ..tools.deps import AgentDeps, Inviter, RelayWriter
from ..tools.event_messages import zone_of
from .agents import Agents, MemberAgent
from .calls import call_refs, failed_locally
from .context import turn_instructions
from .recorder import (
    LedgerWriter,
    StepRecord,
    invalid_calls,
    sent_calls,
    server_calls,
    settling,
    without_result,
)
from .requests import device_requests
from .results import EXPIRED_TEXT, REQUESTS, SUPERSEDED_TEXT, deferred_results, device_outcomes
from .verify import log_invalid_calls, unpaired_tool_calls

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnLimits:
    max_model_requests: int
    """Model requests per run; a looping model ends with a polite answer."""
    model_timeout_s: float
    """One model request."""
    turn_timeout_s: float
    """One whole run."""
    max_calls_per_turn: int
    """Device calls one step may send; the rest fail at once (the model is told)."""
    max_client_failures: int
    """A device tool that failed this many times in a row on a person's devices is not sent again."""

    @classmethod
    def from_settings(cls, settings: Settings) -> TurnLimits:
        return cls(
            max_model_requests=settings.max_model_requests,
            model_timeout_s=settings.model_timeout_s,
            turn_timeout_s=settings.turn_timeout_s,
            max_calls_per_turn=settings.max_calls_per_turn,
            max_client_failures=settings.max_client_failures,
        )


def failure_text(exc: BaseException) -> tuple[str, Text]:
    """What kind of failure ended a run, and what the user reads then (AC-902)."""
    if isinstance(exc, BaseExceptionGroup):  # every fallback model failed: named when all failed alike
        kinds = [failure_text(inner) for inner in exc.exceptions]
        if all(kind == kinds[0][0] for kind, _ in kinds):
            return kinds[0]
        return "server_error", texts.SERVER_ERROR
    if isinstance(exc, TimeoutError | ModelTimeoutError):
        return "timeout", texts.TIMED_OUT
    if isinstance(exc, ModelRateLimitError | ModelQuotaExceededError):
        return "rate_limited", texts.MODEL_RATE_LIMITED
    return "server_error", texts.SERVER_ERROR


@dataclass(frozen=True)
class _Turn:
    turn_id: str
    step: int
    channel_url: str
    user_id: str
    prompt: str
    agent: AgentRole = "member"
    used: RunUsage = field(default_factory=RunUsage)
    """What the turn's earlier steps used of the model (its budget is per turn, across resumes)."""


class TurnRunner:
    """Runs turns with the collaborators it is given (``Services.runner`` builds them for the server)."""

    def __init__(
        self,
        *,
        agents: Agents,
        store: TurnStore,
        history: History,
        transcript: Transcript,
        timezone: ZoneInfo,
        limits: TurnLimits,
        backends: Backends,
        relay_writer: RelayWriter,
        inviter: Inviter,
        effects: Effects,
        ledger: Ledger,
        client_tools: ClientTools,
        tool_descriptions: Callable[[], Mapping[str, str]],
        callbacks: ToolCallbacks,
        clock: Callable[[], datetime],
    ) -> None:
        self.agents = agents
        self.store = store
        self.history = history
        self.transcript = transcript
        self.timezone = timezone
        self.limits = limits
        self.backends = backends
        self.relay_writer = relay_writer
        self.inviter = inviter
        self.effects = effects
        self.ledger = LedgerWriter(ledger, callbacks)
        self.client_tools = client_tools
        self.tool_descriptions = tool_descriptions
        """Descriptions of tools the server did not define (MCP servers'), for their dialogs."""
        self.callbacks = callbacks
        self.clock = clock
        self.usage_limits = UsageLimits(request_limit=limits.max_model_requests)
        self.calls_settled: Callable[[str], None] = lambda channel_url: None
        """Told (with the channel) when a step ended calls before its own end: their requests'
        updates are in the outbox, and whoever drains the conversation may deliver them at once."""

    async def handle_message(self, message: InboundMessage, consumed: Consumed | None = None) -> None:
        """Answer a user message (or pause for the device); ``consumed`` is the inbox event it ends.

        Safe to run again for the same message: a turn that already paused is not run twice.
        """
        snapshot = await self.store.load_turn(message.channel_url, message.turn_id)
        if snapshot is not None:
            # Run before, up to a pause whose requests are in the outbox; or every call of that pause
            # was failed by the server itself and the resume did not get to its end.
            if snapshot.state == "resuming":
                await self.resume(message.channel_url, message.turn_id, consumed)
            return
        role = await self._role(message.user_id)
        turn = _Turn(message.turn_id, 0, message.channel_url, message.user_id, message.text, role)
        # Only the sender's own paused turn is cut short: other people in the channel pause apart.
        active = await self.store.active_turn(message.channel_url, message.user_id)
        if active is not None and await self._supersede(turn, active, consumed):
            return
        history = await self.history.load(message.channel_url, message.user_id)
        await self._run(turn, history, consumed, prompt=message.text)

    async def _supersede(self, turn: _Turn, active_id: str, consumed: Consumed | None) -> bool:
        """The user wrote while a turn waited for the device: close that turn, then answer.

        Returns True when the new message was answered on top of the cut turn.
        """
        snapshot = await self.store.load_turn(turn.channel_url, active_id)
        if snapshot is None:
            return False
        if snapshot.state == "paused" and await self.store.supersede(snapshot.turn):
            self.calls_settled(turn.channel_url)  # the other devices close the dialog now, not after the run
            # Answers that arrived before the cut count; the rest are reported as superseded.
            snapshot = await self.store.load_turn(turn.channel_url, active_id) or snapshot
            TURNS.labels("superseded").inc()
            log.info(
                "turn %s in %s superseded by %s's new message %s; calls cut: %s",
                active_id,
                turn.channel_url,
                turn.user_id,
                turn.turn_id,
                [c.call_id for c in snapshot.turn.sent_calls if c.call_id not in snapshot.answers],
            )
            await self.ledger.settle(
                turn.channel_url,
                active_id,
                settling(snapshot.turn, snapshot.answers, missing="superseded"),
                state="superseded",
            )
            results = deferred_results(snapshot.turn, snapshot.answers, missing=SUPERSEDED_TEXT)
            history = ModelMessagesTypeAdapter.validate_json(snapshot.turn.messages)
            await self._run(turn, history, consumed, prompt=turn.prompt, results=results)
            return True
        # Every call was answered just before the new message: finish that turn first.
        await self.resume(turn.channel_url, active_id)
        return False

    async def resume(self, channel_url: str, turn_id: str, consumed: Consumed | None = None) -> None:
        """Resume a paused run once every call of its turn has an answer."""
        snapshot = await self.store.load_turn(channel_url, turn_id)
        if snapshot is None or snapshot.state != "resuming":
            return
        paused = snapshot.turn
        # Calls without an answer here expired: the device did not answer in time.
        results = deferred_results(paused, snapshot.answers, missing=EXPIRED_TEXT)
        if any(ref.call_id not in snapshot.answers for ref in paused.calls):
            TURNS.labels("expired").inc()
        await self.ledger.settle(
            channel_url, turn_id, settling(paused, snapshot.answers, missing="expired"), state="running"
        )
        await self.store.record_client_outcomes(paused.user_id, device_outcomes(paused, snapshot.answers))
        used = RunUsage(
            requests=paused.model_requests,
            input_tokens=paused.input_tokens,
            output_tokens=paused.output_tokens,
        )
        turn = _Turn(turn_id, paused.step + 1, channel_url, paused.user_id, paused.prompt, paused.agent, used)
        history = ModelMessagesTypeAdapter.validate_json(paused.messages)
        await self._run(turn, history, consumed, results=results)

    async def _run(
        self,
        turn: _Turn,
        history: list[ModelMessage],
        consumed: Consumed | None,
        *,
        prompt: str | None = None,
        results: DeferredToolResults | None = None,
    ) -> None:
        profile = await self._profile(turn.user_id)
        zone = zone_of(profile, self.timezone)
        deps = AgentDeps(
            user_id=turn.user_id,
            channel_url=turn.channel_url,
            timezone=zone,
            turn_id=turn.turn_id,
            clock=self.clock,
            backends=self.backends,
            relay_writer=self.relay_writer,
            inviter=self.inviter,
            effects=self.effects,
            declaration=await self.client_tools.get(turn.user_id),
            callbacks=self.callbacks,
        )
        agent = self.agents.guest if turn.agent == "guest" else self.agents.member
        usage = replace(turn.used)  # counts on from the turn's earlier steps
        began, started = time.time(), time.perf_counter()
        with log_context(channel=turn.channel_url, turn_id=turn.turn_id, user=turn.user_id):
            try:
                await self._step(
                    turn,
                    agent,
                    history,
                    consumed,
                    deps,
                    usage,
                    began,
                    prompt=prompt,
                    results=results,
                    name=profile.name if profile else None,
                )
            finally:
                TURN_SECONDS.observe(time.perf_counter() - started)

    async def _step(
        self,
        turn: _Turn,
        agent: MemberAgent,
        history: list[ModelMessage],
        consumed: Consumed | None,
        deps: AgentDeps,
        usage: RunUsage,
        began: float,
        *,
        prompt: str | None,
        results: DeferredToolResults | None,
        name: str | None,
    ) -> None:
        zone = deps.timezone
        try:
            if usage.requests >= self.limits.max_model_requests:
                raise UsageLimitExceeded(f"the turn already made {usage.requests} model requests")
            async with asyncio.timeout(self.limits.turn_timeout_s):
                result = await agent.run(
                    prompt,
                    message_history=history,
                    deferred_tool_results=results,
                    instructions=turn_instructions(
                        zone,
                        turn.user_id,
                        await self.transcript.recent(turn.channel_url),
                        now=deps.now(),
                        name=name,
                    ),
                    deps=deps,
                    usage=usage,
                    usage_limits=self.usage_limits,
                    model_settings={"timeout": self.limits.model_timeout_s},
                )
        except (UsageLimitExceeded, UnexpectedModelBehavior) as exc:
            # Out of budget, or the model kept making calls it could not fix: an honest "could not".
            log.warning(
                "turn %s in %s could not be completed after %d model requests: %s",
                turn.turn_id,
                turn.channel_url,
                usage.requests,
                exc,
            )
            TURNS.labels("limited").inc()
            await self._record(turn, "limited", began, usage, server_calls(deps.tool_runs), ended=True)
            await self._give_up(turn, texts.TURN_LIMIT, consumed)
            return
        except (Exception, TimeoutError) as exc:
            kind, text = failure_text(exc)
            log.exception("turn %s in %s failed (%s)", turn.turn_id, turn.channel_url, kind)
            TURNS.labels("failed").inc()
            await self._record(turn, "failed", began, usage, server_calls(deps.tool_runs), ended=True)
            await self._give_up(turn, text, consumed)
            return

        new = result.new_messages()
        log_invalid_calls(new, deps.calls_run, turn.turn_id, turn.channel_url)
        now = time.time()
        calls = [*server_calls(deps.tool_runs), *invalid_calls(new, deps.calls_run, now)]
        output = result.output
        pending = output if isinstance(output, DeferredToolRequests) else None
        if unpaired := unpaired_tool_calls(result.all_messages(), pending):
            UNPAIRED_TOOL_CALLS.inc(len(unpaired))
            calls += without_result(unpaired, now)
            log.warning(
                "turn %s in %s: tool calls without a result: %s",
                turn.turn_id,
                turn.channel_url,
                [(c.tool_name, c.tool_call_id) for c in unpaired],
            )
        if isinstance(output, DeferredToolRequests):
            TURNS.labels("paused").inc()
            messages = dump_messages(result.all_messages())
            declared = deps.declaration.by_name() if deps.declaration else {}
            await self._pause(replace(turn, used=usage), messages, output, consumed, calls, began, declared)
            return
        TURNS.labels("answered").inc()
        await self._record(turn, "answered", began, usage, calls, ended=True)
        answer = TextOut(text=output, dedup_id=f"{turn.turn_id}:{turn.step}:answer")
        await self.store.finish(
            turn.channel_url,
            turn.user_id,
            result.all_messages(),
            turn_id=turn.turn_id,
            paused=turn.step > 0,
            answer=output,
            outbox=[answer],
            consumed=consumed,
        )

    async def _record(
        self,
        turn: _Turn,
        state: TurnState,
        began: float,
        usage: RunUsage,
        calls: list[LedgerCall],
        *,
        ended: bool = False,
    ) -> None:
        step = StepRecord(turn.turn_id, turn.channel_url, turn.user_id, began, state, usage, calls)
        log.info(
            "step %d of turn %s: %s after %.0f ms; %d tool calls, %d model requests in the turn",
            turn.step,
            turn.turn_id,
            state,
            (time.time() - began) * 1000,
            len(calls),
            usage.requests,
        )
        await self.ledger.step(step, ended=ended)

    async def _pause(
        self,
        turn: _Turn,
        messages: str,
        requests: DeferredToolRequests,
        consumed: Consumed | None,
        calls: list[LedgerCall],
        began: float,
        declared: Mapping[str, DeclaredTool],
    ) -> None:
        refs = call_refs(requests, declared)
        failed = failed_locally(
            refs,
            await self.store.client_failures(turn.user_id),
            max_calls=self.limits.max_calls_per_turn,
            max_failures=self.limits.max_client_failures,
        )
        paused = PausedTurn(
            turn_id=turn.turn_id,
            step=turn.step,
            channel_url=turn.channel_url,
            user_id=turn.user_id,
            created_at=time.time(),
            prompt=turn.prompt,
            agent=turn.agent,
            messages=messages,
            requests=REQUESTS.dump_json(requests).decode(),
            calls=refs,
            model_requests=turn.used.requests,
            input_tokens=turn.used.input_tokens,
            output_tokens=turn.used.output_tokens,
            local_answers=failed,
        )
        calls = [*calls, *sent_calls(refs, requests, failed, paused.created_at)]
        for ref in paused.sent_calls:
            with log_context(call_id=ref.call_id):
                log.info("asking the phone: %s (%s) for %s", ref.method, ref.tool_name, ref.tool_call_id)
        await self._record(turn, "paused", began, turn.used, calls)
        if not paused.sent_calls:  # nothing to wait for: go on at once
            await self.store.save_paused(paused)
            await self.resume(turn.channel_url, turn.turn_id, consumed)
            return
        context = ApprovalContext(
            language=language_of(paused.prompt),
            timezone=await self._zone(paused.user_id),  # the dialog says when in the person's own time
            backends=self.backends,
            user_id=paused.user_id,
            descriptions=self.tool_descriptions(),
        )
        await self.store.save_paused(paused, outbox=await device_requests(paused, context), consumed=consumed)

    async def _zone(self, user_id: str) -> ZoneInfo:
        """The person's time zone from the directory; the server's default when unknown or invalid."""
        return zone_of(await self._profile(user_id), self.timezone)

    async def _profile(self, user_id: str) -> UserProfile | None:
        """The person's directory profile; None when unknown, or when the directory cannot say."""
        try:
            return await self.backends.users.get_profile(user_id)
        except UserDirectoryError:
            return None

    async def _role(self, user_id: str) -> AgentRole:
        """'member' for people in the directory, 'guest' for everyone else (invited guests).

        With no directory at all (nothing imported, no users API) everyone is a member.
        """
        users = self.backends.users
        if await users.is_member(user_id) or not await users.has_users():
            return "member"
        return "guest"

    async def _give_up(self, turn: _Turn, text: Text, consumed: Consumed | None) -> None:
        """End the turn with a short apology instead of silence, keeping the history valid."""
        said = text(language_of(turn.prompt))
        history = await self.history.load(turn.channel_url, turn.user_id)
        history += [
            ModelRequest(parts=[UserPromptPart(turn.prompt)]),
            ModelResponse(parts=[TextPart(said)]),
        ]
        await self.store.finish(
            turn.channel_url,
            turn.user_id,
            history,
            turn_id=turn.turn_id,
            paused=turn.step > 0,
            answer=said,
            outbox=[TextOut(text=said, dedup_id=f"{turn.turn_id}:{turn.step}:answer")],
            consumed=consumed,
        )
