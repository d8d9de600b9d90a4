"""Runs the model for one step of a turn, within the turn's limits, and hands its end to the endings.

A step ends in one of four ways: an answer, a pause (the device calls are stored), a failure (the
user gets a short apology instead), or a stop the person asked for (what was shown so far is the
answer, :mod:`.stopping`). The model runs once per step.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, TypeVar
from zoneinfo import ZoneInfo

from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    RunUsage,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.messages import ModelMessage, UserContent
from redis.exceptions import RedisError

from ..backends import Backends
from ..channels.base import CHAT, Capabilities
from ..i18n import texts
from ..logs import log_context
from ..metrics import TURN_SECONDS, TURNS, UNPAIRED_TOOL_CALLS
from ..protocol.declarations import Declaration
from ..store.device_declarations import ClientTools
from ..store.effects import Effects
from ..store.history import paused_messages
from ..store.inbox import Consumed
from ..store.reads import Batch
from ..store.standing_approvals import Standing, standing_read
from ..store.transcript import Line, Transcript
from ..store.turn_stops import TurnStops, step_mark
from ..tools.agent_deps import AgentDeps, Inviter, PhoneInvites, RelayWriter
from ..tools.callbacks import ToolCallbacks
from ..tools.event_messages import zone_of
from .agents import Agents, MemberAgent
from .answering import AnsweredBy, ModelChain, noting_answers
from .context import QuotedVoices, channel_voices, reach_instructions, turn_instructions
from .ledger_calls import invalid_calls, server_calls, without_result
from .people import Person, profile_of
from .step_endings import StepEndings, TurnStep
from .stopping import STOPPED, Stop, until_stopped
from .streaming import Streaming, StreamSender, can_stream
from .turn_limits import TurnLimits, failure_text
from .verify import log_invalid_calls, unpaired_tool_calls

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class StepInputs:
    """What a step reads before its model run, in one round trip with the step's other reads."""

    declaration: Declaration | None
    """The device tools the person's apps declared."""
    recent: list[Line]
    """The channel's recent lines, quoted to the model (:func:`channel_voices`)."""
    client_failures: dict[str, int]
    """Tool name -> failures in a row of the person's devices."""
    standing: tuple[Standing, ...] = ()
    """The person's standing approvals ("always"): no dialog for the calls they cover, where they hold."""


class ModelStep:
    """One model run per step: the agent for the person's membership, with what the tools may use."""

    def __init__(
        self,
        *,
        agents: Agents,
        transcript: Transcript,
        timezone: ZoneInfo,
        limits: TurnLimits,
        backends: Backends,
        relay_writer: RelayWriter,
        inviter: Inviter,
        effects: Effects,
        client_tools: ClientTools,
        callbacks: ToolCallbacks,
        clock: Callable[[], datetime],
        endings: StepEndings,
        streaming: Streaming | None = None,
        text_shown: Callable[[str], None] = lambda channel_url: None,
        capabilities: Callable[[str], Capabilities] = lambda channel_url: CHAT,
        phone_invites: PhoneInvites | None = None,
        stops: TurnStops | None = None,
        models: ModelChain | None = None,
    ) -> None:
        self.agents = agents
        self.answered_by = AnsweredBy(models)
        """Counts each model request by the model that answered it, and notes it for the step's record."""
        self.stops = stops
        """Where a step marks itself running and reads whether the person stopped it (None: no stop)."""
        self.phone_invites = phone_invites
        """How guests are invited by phone number here (None: this server texts nobody)."""
        self.capabilities = capabilities
        """What the channel can do in a conversation: no device tools where no app answers, no
        streaming where messages cannot grow, short plain text for SMS."""
        self.streaming = streaming
        """How answers stream into the channel (None: each is sent whole once written)."""
        self.text_shown = text_shown
        """Told (with the channel) when a streamed answer first shows."""
        self.transcript = transcript
        self.timezone = timezone
        self.limits = limits
        self.backends = backends
        self.relay_writer = relay_writer
        self.inviter = inviter
        self.effects = effects
        self.client_tools = client_tools
        self.callbacks = callbacks
        self.clock = clock
        self.endings = endings
        self.usage_limits = UsageLimits(request_limit=limits.max_model_requests)

    def read_inputs(self, batch: Batch, channel_url: str, user_id: str) -> Callable[[], StepInputs]:
        """Add the step's reads to ``batch``; the returned function gives them once it has run."""
        declaration = batch.add(self.client_tools.read(user_id))
        recent = batch.add(self.transcript.recent_read(channel_url))
        failures = batch.add(self.endings.store.client_failures_read(user_id))
        allowed = batch.add(standing_read(user_id))
        return lambda: StepInputs(declaration.value, recent.value, failures.value, allowed.value)

    async def run(
        self,
        turn: TurnStep,
        history: list[ModelMessage],
        consumed: Consumed | None,
        *,
        prompt: str | Sequence[UserContent] | None = None,
        results: DeferredToolResults | None = None,
        person: Person | None = None,
        inputs: StepInputs | None = None,
    ) -> bool:
        """Run the step to its end. Returns True when it paused without sending a device call (the
        server failed every one): the turn is to be resumed at once. ``person`` and ``inputs``: the
        directory's answer and the step's reads, when the caller made them with its own."""
        if inputs is None:
            batch = self.endings.store.batch()
            read = self.read_inputs(batch, turn.channel_url, turn.user_id)
            await batch.run()
            inputs = read()
        if person is None:
            profile = await profile_of(self.backends.users, turn.user_id)
        else:
            profile = person.profile
        zone = zone_of(profile, self.timezone)
        voices = channel_voices(turn.user_id, inputs.recent)
        reach = self.capabilities(turn.channel_url)
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
            declaration=inputs.declaration,
            callbacks=self.callbacks,
            standing=await self._standing(turn, inputs, quoted=voices is not None),
            devices=reach.devices,
            phone_invites=self.phone_invites,
        )
        agent = self.agents.guest if turn.agent == "guest" else self.agents.member
        usage = replace(turn.used)  # counts on from the turn's earlier steps
        began, started = time.time(), time.perf_counter()
        with (
            log_context(channel=turn.channel_url, turn_id=turn.turn_id, user=turn.user_id),
            noting_answers() as answers,
        ):
            try:
                return await self._step(
                    replace(turn, answers=answers),
                    agent,
                    history,
                    consumed,
                    deps,
                    usage,
                    began,
                    inputs,
                    voices,
                    prompt=prompt,
                    results=results,
                    name=turn.name or (profile.name if profile else None),
                    reach=reach,
                )
            finally:
                TURN_SECONDS.observe(time.perf_counter() - started)

    async def _standing(self, turn: TurnStep, inputs: StepInputs, *, quoted: bool) -> tuple[Standing, ...]:
        """The standing approvals that hold in this step: none in a run that quotes other people's words
        (``quoted``) or in a channel that is not the person's own with the assistant, where someone
        else may have asked for the call."""
        if not inputs.standing or quoted:
            return ()
        private = self.endings.private
        alone = private is not None and await private.alone_with(turn.channel_url, turn.user_id)
        return inputs.standing if alone else ()

    async def _step(
        self,
        turn: TurnStep,
        agent: MemberAgent,
        history: list[ModelMessage],
        consumed: Consumed | None,
        deps: AgentDeps,
        usage: RunUsage,
        began: float,
        inputs: StepInputs,
        voices: str | None,
        *,
        prompt: str | Sequence[UserContent] | None,
        results: DeferredToolResults | None,
        name: str | None,
        reach: Capabilities = CHAT,
    ) -> bool:
        endings = self.endings
        sender: StreamSender | None = None
        if self.streaming is not None and reach.streams and can_stream(agent.model):
            sender = self.streaming.sender(turn.channel_url, turn.turn_id, turn.step, self.text_shown)
        try:
            if usage.requests >= self.limits.max_model_requests:
                raise UsageLimitExceeded(f"the turn already made {usage.requests} model requests")
            async with asyncio.timeout(self.limits.turn_timeout_s):
                result = await self._stoppable(
                    turn,
                    agent.run(
                        prompt,
                        message_history=history,
                        deferred_tool_results=results,
                        instructions=turn_instructions(deps.timezone, turn.user_id, now=deps.now(), name=name)
                        + reach_instructions(reach),
                        capabilities=[self.answered_by, *([QuotedVoices(voices)] if voices else [])],
                        deps=deps,
                        usage=usage,
                        usage_limits=self.usage_limits,
                        model_settings={"timeout": self.limits.model_timeout_s},
                        event_stream_handler=sender.handle if sender is not None else None,
                    ),
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
            recorded = await endings.record(
                turn, "limited", began, usage, server_calls(deps.tool_runs), ended=True
            )
            await endings.give_up(turn, texts.TURN_LIMIT, consumed, recorded, await _closed(sender))
            return False
        except (Exception, TimeoutError) as exc:
            kind, text = failure_text(exc)
            log.exception("turn %s in %s failed (%s)", turn.turn_id, turn.channel_url, kind)
            TURNS.labels("failed").inc()
            recorded = await endings.record(
                turn, "failed", began, usage, server_calls(deps.tool_runs), ended=True
            )
            await endings.give_up(turn, text, consumed, recorded, await _closed(sender))
            return False
        await _closed(sender)
        if result is STOPPED:  # the person stopped it: what was written so far is the answer
            TURNS.labels("stopped").inc()
            calls_run = server_calls(deps.tool_runs)
            recorded = await endings.record(turn, "stopped", began, usage, calls_run, ended=True)
            await endings.stopped(turn, consumed, recorded, sender)
            return False

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
            messages, history_len = paused_messages(result.all_messages(), history, turn.history_len)
            declared = deps.declaration.by_name() if deps.declaration else {}
            again = await endings.pause(
                replace(turn, used=usage, history_len=history_len),
                messages,
                output,
                consumed,
                calls,
                began,
                declared,
                deps.timezone,
                inputs.client_failures,
                sender,
                quoted=voices is not None,
            )
            if sender is not None:
                await sender.forget()
            return again
        TURNS.labels("answered").inc()
        recorded = await endings.record(turn, "answered", began, usage, calls, ended=True)
        await endings.answer(turn, result.all_messages(), output, consumed, recorded, sender)
        if sender is not None:
            await sender.forget()
        return False

    async def _stoppable(self, turn: TurnStep, run: Coroutine[Any, Any, T]) -> T | Literal[Stop.STOPPED]:
        """The model run, which the person may stop while it goes on (the step is marked running)."""
        if self.stops is None:
            return await run
        stops, mark = self.stops, step_mark(turn.turn_id, turn.step)
        await stops.started(turn.channel_url, turn.user_id, mark, lasts_s=self.limits.turn_timeout_s)
        try:
            return await until_stopped(run, lambda: stops.asked(turn.channel_url, turn.user_id, mark))
        finally:
            try:
                await stops.ended(turn.channel_url, turn.user_id, mark)
            except RedisError as exc:  # the mark expires by itself: nothing for an operator to do
                log.info("could not clear the running mark of %s: %s", mark, exc)


async def _closed(sender: StreamSender | None) -> StreamSender | None:
    """The step's stream, its channel calls over (the run ended)."""
    if sender is not None:
        await sender.close()
    return sender
