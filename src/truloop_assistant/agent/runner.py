"""Runs one turn of a conversation: a new user message, or the resume of a paused run.

A new message from someone whose own turn waits for the device cuts that turn short first; a
resume runs once every call of its pause has an answer (or expired). A person's messages that
waited in a row are one turn, the first one's (the inbox gathers them): the model reads their texts
in order, one per line, as one user message, and the history keeps them so. Each step is run by
:class:`~.model_step.ModelStep` and ends in :class:`~.step_endings.StepEndings`: what it sends goes
to the conversation's outbox in the same transaction that records the step and takes its event off
the inbox, and delivery (retried for as long as the channel is down) is the drain's job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic_ai import DeferredToolResults, RunUsage
from pydantic_ai.messages import ModelMessage, UserContent

from ..backends import Backends
from ..channels.base import CHAT, Capabilities, InboundMessage
from ..deferred.resumes import is_resuming
from ..metrics import TURNS
from ..store.device_declarations import ClientTools
from ..store.effects import Effects
from ..store.history import History, restored_messages
from ..store.history_files import with_bytes
from ..store.inbox import Consumed
from ..store.ledger import Ledger
from ..store.transcript import Transcript
from ..store.turn_stops import TurnStops
from ..store.turns import TurnStore
from ..tools.agent_deps import Inviter, PhoneInvites, RelayWriter
from ..tools.callbacks import ToolCallbacks
from .agents import Agents
from .answering import ModelChain
from .model_step import ModelStep, StepInputs
from .people import Person, PersonLookup
from .private_requests import PrivateRequests
from .recorder import LedgerWriter, ToolLabels, settling
from .results import EXPIRED_TEXT, SUPERSEDED_TEXT, deferred_results, device_outcomes
from .step_endings import StepEndings, TurnStep
from .streaming import Streaming
from .turn_files import TurnFiles
from .turn_limits import TurnLimits

log = logging.getLogger(__name__)


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
        private: PrivateRequests | None = None,
        streaming: Streaming | None = None,
        capabilities: Callable[[str], Capabilities] = lambda channel_url: CHAT,
        phone_invites: PhoneInvites | None = None,
        files: TurnFiles | None = None,
        models: ModelChain | None = None,
    ) -> None:
        self.store = store
        self.files = files or TurnFiles(None)
        """Reads the files a turn's messages carry (None: no file is read, each is named as sent)."""
        self.history = history
        self.backends = backends
        self.ledger = LedgerWriter(ledger, callbacks, labels=ToolLabels(lambda: tool_descriptions().keys()))
        endings = StepEndings(
            store=store,
            history=history,
            ledger=self.ledger,
            limits=limits,
            backends=backends,
            tool_descriptions=tool_descriptions,
            private=private,
        )
        self.model_step = ModelStep(
            agents=agents,
            transcript=transcript,
            timezone=timezone,
            limits=limits,
            backends=backends,
            relay_writer=relay_writer,
            inviter=inviter,
            effects=effects,
            client_tools=client_tools,
            callbacks=callbacks,
            clock=clock,
            endings=endings,
            streaming=streaming,
            text_shown=lambda channel_url: self.text_shown(channel_url),
            capabilities=capabilities,
            phone_invites=phone_invites,
            stops=TurnStops(store.redis),  # the person may stop a running step (POST .../turns/stop)
            models=models,  # the configured names of the model and its fallbacks (None: the model's own)
        )
        self.calls_settled: Callable[[str], None] = lambda channel_url: None
        """Told (with the channel) when a step ended calls before its own end: their requests'
        updates are in the outbox, and whoever drains the conversation may deliver them at once."""
        self.text_shown: Callable[[str], None] = lambda channel_url: None
        """Told (with the channel) when a streamed answer first shows (the typing indicator stops)."""

    async def handle_message(
        self,
        message: InboundMessage,
        consumed: Consumed | None = None,
        *,
        follow_ups: Sequence[InboundMessage] = (),
    ) -> None:
        """Answer a user message (or pause for the device); ``consumed`` is the inbox event it ends.
        ``follow_ups``: the same person's messages that waited right behind it, answered in the same
        turn (``consumed`` holds their events too).

        Safe to run again for the same message: a turn that already paused is not run twice, and it
        consumes only the messages it answered then (any gathered since wait for the next turn).
        """
        message_ids = (message.message_id, *(m.message_id for m in follow_ups))
        # What the step needs, in one round trip: the message's turn (run before?), the sender's own
        # paused turn, their history, and the model run's inputs.
        batch = self.store.batch()
        found = batch.add(self.store.turn_read(message.channel_url, message.turn_id))
        active = batch.add(self.store.active_read(message.channel_url, message.user_id))
        history = batch.add(self.history.read(message.channel_url, message.user_id))
        inputs = self.model_step.read_inputs(batch, message.channel_url, message.user_id)
        record = self.ledger.read_record(batch, message.channel_url, message.turn_id)
        lookup = PersonLookup(self.backends.users, batch, message.user_id, membership=True)
        await batch.run()
        if (snapshot := found.value) is not None:
            if consumed is not None:  # its messages are its first and those it gathered then
                consumed.keep(len(snapshot.turn.message_ids) - 1)
            # Run before, up to a pause whose requests are in the outbox; or every call of that pause
            # was failed by the server itself and the resume did not get to its end.
            if is_resuming(snapshot):
                await self.resume(message.channel_url, message.turn_id, consumed)
            return
        person = await lookup.person()
        said = await self.files.read([message, *follow_ups])
        turn = TurnStep(
            message.turn_id,
            0,
            message.channel_url,
            message.user_id,
            said.prompt,
            person.membership,
            ledger=record(),
            message_ids=message_ids,
            files=said.files,
            refusals=said.refusals,
            name=message.sender_name,
        )
        if not said.readable:  # only files it could not take: their short answers are the answer
            endings = self.model_step.endings
            turn = replace(turn, refusals=(), history_len=len(history.value))
            recorded = await endings.record(turn, "answered", time.time(), RunUsage(), [], ended=True)
            await endings.reply(turn, "\n".join(said.refusals), consumed, recorded)
            return
        if follow_ups:
            log.info(
                "turn %s in %s answers %d messages in a row", turn.turn_id, turn.channel_url, len(message_ids)
            )
        # Only the sender's own paused turn is cut short: other people in the channel pause apart.
        if active.value is not None:
            if await self._supersede(turn, active.value, history.value, consumed, said.sent()):
                return
            # That turn was resumed to its end first: the history and the channel's lines grew.
            again = self.store.batch()
            history = again.add(self.history.read(message.channel_url, message.user_id))
            inputs = self.model_step.read_inputs(again, message.channel_url, message.user_id)
            await again.run()
        turn = replace(turn, history_len=len(history.value))
        await self._run(turn, history.value, consumed, prompt=said.sent(), person=person, inputs=inputs())

    async def _supersede(
        self,
        turn: TurnStep,
        active_id: str,
        stored: list[ModelMessage],
        consumed: Consumed | None,
        prompt: str | Sequence[UserContent],
    ) -> bool:
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
            cut = snapshot.turn  # the new message is answered on top of the cut turn's messages
            history, history_len = restored_messages(stored, cut.history_len, cut.rest)
            turn = replace(turn, history_len=history_len)
            await self._run(turn, history, consumed, prompt=prompt, results=results)
            return True
        # Every call was answered just before the new message: finish that turn first.
        await self.resume(turn.channel_url, active_id)
        return False

    async def resume(self, channel_url: str, turn_id: str, consumed: Consumed | None = None) -> None:
        """Resume a paused run once every call of its turn has an answer."""
        batch = self.store.batch()  # the turn, and its ledger record to settle its calls in
        found = batch.add(self.store.turn_read(channel_url, turn_id))
        record = self.ledger.read_record(batch, channel_url, turn_id)
        await batch.run()
        snapshot = found.value
        if not is_resuming(snapshot):
            return
        paused = snapshot.turn
        # Calls without an answer here expired: the device did not answer in time.
        results = deferred_results(paused, snapshot.answers, missing=EXPIRED_TEXT)
        if any(ref.call_id not in snapshot.answers for ref in paused.calls):
            TURNS.labels("expired").inc()
        # The calls' ends in the ledger and the devices' part counted, then the step's reads (which
        # see them), in one round trip.
        batch = self.store.batch()
        known = await self.ledger.settle(
            channel_url,
            turn_id,
            settling(paused, snapshot.answers, missing="expired"),
            state="running",
            known=record(),
            batch=batch,
        )
        self.store.count_client_outcomes(batch, paused.user_id, device_outcomes(paused, snapshot.answers))
        inputs = self.model_step.read_inputs(batch, channel_url, paused.user_id)
        stored = batch.add(self.history.read(channel_url, paused.user_id)) if paused.history_len else None
        lookup = PersonLookup(self.backends.users, batch, paused.user_id)
        await batch.run()
        used = RunUsage(
            requests=paused.model_requests,
            input_tokens=paused.input_tokens,
            output_tokens=paused.output_tokens,
        )
        history, history_len = restored_messages(
            stored.value if stored is not None else [], paused.history_len, paused.rest
        )
        history = with_bytes(history, await self.files.again(channel_url, paused.files))
        turn = TurnStep(
            turn_id,
            paused.step + 1,
            channel_url,
            paused.user_id,
            paused.prompt,
            paused.agent,
            used,
            known,
            history_len,
            tuple(paused.message_ids),
            tuple(paused.files),
            name=paused.name,
        )
        person = Person(await lookup.profile(), paused.agent)
        await self._run(turn, history, consumed, results=results, person=person, inputs=inputs())

    async def _run(
        self,
        turn: TurnStep,
        history: list[ModelMessage],
        consumed: Consumed | None,
        *,
        prompt: str | Sequence[UserContent] | None = None,
        results: DeferredToolResults | None = None,
        person: Person | None = None,
        inputs: StepInputs | None = None,
    ) -> None:
        if await self.model_step.run(
            turn, history, consumed, prompt=prompt, results=results, person=person, inputs=inputs
        ):
            await self.resume(turn.channel_url, turn.turn_id, consumed)  # nothing was sent to wait for
