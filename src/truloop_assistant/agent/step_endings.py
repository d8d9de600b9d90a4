"""How a step of a turn ends, in the store and the ledger: an answer, a pause for the device, or an apology.

Whatever a step sends goes to the conversation's outbox in the same transaction that records the
step and takes its event off the inbox; the step's calls go to the ledger just before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from pydantic_ai import DeferredToolRequests, RunUsage
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from ..backends import Backends
from ..channels.relay import RelayError
from ..deferred.approvals import CONFIRM_METHOD, ApprovalContext
from ..i18n import Language, Text, language_of, texts
from ..logs import log_context
from ..protocol.declarations import DeclaredTool
from ..protocol.files import MessageFile
from ..store.answers import ServerFailure
from ..store.history import History
from ..store.inbox import Consumed
from ..store.ledger import LedgerCall, TurnState
from ..store.outbox import RpcOut, StreamOut, TextOut
from ..store.reads import Write
from ..store.records import Membership, PausedTurn
from ..store.turns import TurnStore
from .answering import Answers
from .ledger_calls import sent_calls
from .paused_calls import call_refs, failed_locally
from .private_requests import PrivateRequests
from .recorder import KnownRecord, LedgerWriter, StepRecord
from .requests import device_requests
from .results import REQUESTS
from .streaming import StreamSender
from .turn_limits import TurnLimits

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnStep:
    """One step of a turn: the run of a new message (step 0), or of a resume."""

    turn_id: str
    step: int
    channel_url: str
    user_id: str
    prompt: str
    agent: Membership = "member"
    used: RunUsage = field(default_factory=RunUsage)
    """What the turn's earlier steps used of the model (its budget is per turn, across resumes)."""
    ledger: KnownRecord | None = None
    """The turn's ledger record as the step found it, when it was read (or written) at its start."""
    history_len: int = 0
    """How many of the messages the step starts from are the person's stored history."""
    message_ids: tuple[str, ...] = ()
    """The messages the turn answers, in order (its own first; then those of the same person
    gathered behind it): ``prompt`` is their texts, one per line."""
    files: tuple[MessageFile, ...] = ()
    """The pictures, documents and voice notes of those messages (read again when it resumes)."""
    refusals: tuple[str, ...] = ()
    """Short answers for the files the step could not take, sent with what the step sends."""
    name: str | None = None
    """The name the chat shows for the person (None: it did not say; the directory's is used)."""
    answers: Answers = field(default_factory=Answers)
    """Which models answered this step's model requests (noted as its run goes)."""

    def refusal_outs(self) -> list[TextOut]:
        """The refusals as messages of the step (each sent once, whatever retries the step)."""
        return [
            TextOut(text=said, dedup_id=f"{self.turn_id}:{self.step}:file{index}")
            for index, said in enumerate(self.refusals)
        ]


class StepEndings:
    """Records how each step ended and leaves what it says in the outbox."""

    def __init__(
        self,
        *,
        store: TurnStore,
        history: History,
        ledger: LedgerWriter,
        limits: TurnLimits,
        backends: Backends,
        tool_descriptions: Callable[[], Mapping[str, str]],
        private: PrivateRequests | None = None,
    ) -> None:
        self.store = store
        self.history = history
        self.ledger = ledger
        self.limits = limits
        self.backends = backends
        self.tool_descriptions = tool_descriptions
        """Descriptions of tools the server did not define (MCP servers'), for their dialogs."""
        self.private = private
        """Sends a turn's requests in a channel of several people to the person's 1:1 channel (None:
        every request is posted in the conversation's channel)."""

    async def record(
        self,
        turn: TurnStep,
        state: TurnState,
        began: float,
        usage: RunUsage,
        calls: list[LedgerCall],
        *,
        ended: bool = False,
    ) -> Write | None:
        """The step's calls and usage for the ledger; ``ended``: the turn answered or gave up. Returns
        the record's write, which goes in the step's own transaction (:meth:`answer`, :meth:`give_up`)."""
        step = StepRecord(
            turn.turn_id,
            turn.channel_url,
            turn.user_id,
            began,
            state,
            usage,
            calls,
            turn.message_ids,
            turn.answers,
        )
        log.info(
            "step %d of turn %s: %s after %.0f ms; %d tool calls, %d model requests in the turn",
            turn.step,
            turn.turn_id,
            state,
            (time.time() - began) * 1000,
            len(calls),
            usage.requests,
        )
        return await self.ledger.step(step, ended=ended, known=turn.ledger)

    async def answer(
        self,
        turn: TurnStep,
        messages: list[ModelMessage],
        answer: str,
        consumed: Consumed | None,
        recorded: Write | None = None,
        streamed: StreamSender | None = None,
    ) -> None:
        """Keep the run's messages and send its answer (``recorded``: the step's ledger record;
        ``streamed``: the messages the answer was streamed into, which the outbox finishes with it)."""
        outbox: list[TextOut | StreamOut] = [*turn.refusal_outs()]
        if streamed is not None:
            ending = await streamed.ending(answer)
            outbox += ending.items
            if ending.covers_text:
                outbox_text: list[TextOut] = []
            else:
                outbox_text = [TextOut(text=answer, dedup_id=f"{turn.turn_id}:{turn.step}:answer")]
        else:
            outbox_text = [TextOut(text=answer, dedup_id=f"{turn.turn_id}:{turn.step}:answer")]
        await self.store.finish(
            turn.channel_url,
            turn.user_id,
            messages,
            turn_id=turn.turn_id,
            paused=turn.step > 0,
            answer=answer,
            outbox=[*outbox, *outbox_text],
            consumed=consumed,
            recorded=recorded,
        )

    async def give_up(
        self,
        turn: TurnStep,
        text: Text,
        consumed: Consumed | None,
        recorded: Write | None = None,
        streamed: StreamSender | None = None,
    ) -> None:
        """End the turn with a short apology instead of silence, keeping the history valid (a message
        the answer was being streamed into is finished with the apology)."""
        await self.reply(turn, text(language_of(turn.prompt)), consumed, recorded, streamed)

    async def reply(
        self,
        turn: TurnStep,
        said: str,
        consumed: Consumed | None,
        recorded: Write | None = None,
        streamed: StreamSender | None = None,
    ) -> None:
        """End the turn with ``said``, the server's own words (no model run), keeping the history valid."""
        history = await self.history.load(turn.channel_url, turn.user_id)
        history += [
            ModelRequest(parts=[UserPromptPart(turn.prompt)]),
            ModelResponse(parts=[TextPart(said)]),
        ]
        await self.answer(turn, history, said, consumed, recorded, streamed)

    async def stopped(
        self,
        turn: TurnStep,
        consumed: Consumed | None,
        recorded: Write | None = None,
        streamed: StreamSender | None = None,
    ) -> None:
        """End a turn the person stopped: the text the channel shows of it is its answer (its streamed
        messages finished with what was written, the last one marked stopped); text not shown yet is
        dropped, and a step that did not stream sends nothing. The history keeps what was shown, so
        the next turn knows what was said."""
        shown = streamed.shown_text() if streamed is not None else ""
        outbox = (await streamed.ending(None, stopped=True)).items if streamed is not None else []
        history = await self.history.load(turn.channel_url, turn.user_id)
        history += [
            ModelRequest(parts=[UserPromptPart(turn.prompt)]),
            ModelResponse(parts=[TextPart(shown or _STOPPED_UNSAID)]),
        ]
        await self.store.finish(
            turn.channel_url,
            turn.user_id,
            history,
            turn_id=turn.turn_id,
            paused=turn.step > 0,
            answer=shown or None,
            outbox=outbox,
            consumed=consumed,
            recorded=recorded,
        )

    async def pause(
        self,
        turn: TurnStep,
        messages: str,
        requests: DeferredToolRequests,
        consumed: Consumed | None,
        calls: list[LedgerCall],
        began: float,
        declared: Mapping[str, DeclaredTool],
        timezone: ZoneInfo,
        client_failures: Mapping[str, int],
        streamed: StreamSender | None = None,
        *,
        quoted: bool = True,
    ) -> bool:
        """Store the paused turn and send its device requests (their dialogs say when in ``timezone``,
        the person's own; a tool whose devices failed too often in a row, ``client_failures``, is
        failed by the server instead). In a channel of several people they go to the person's 1:1
        channel with the assistant, the group being told so; when that channel cannot be had, none
        goes anywhere: the calls fail (the model is told) and the group hears only that. A dialog offers
        "always" only in the person's own 1:1 chat, in a run that quotes nobody else (``quoted``).

        Returns True when no call went out (the server failed them all): the turn is stored with its
        event still on the inbox, to be resumed at once.
        """
        refs = call_refs(requests, declared)
        failed = failed_locally(
            refs,
            client_failures,
            max_calls=self.limits.max_calls_per_turn,
            max_failures=self.limits.max_client_failures,
        )
        language = language_of(turn.prompt)
        private: str | None = None  # the person's 1:1 channel, where this group turn's requests go
        notes: list[TextOut | StreamOut] = []
        finishing: list[TextOut | StreamOut] = []  # text before the calls, streamed and not finished yet
        if streamed is not None:
            finishing += (await streamed.ending(None)).items
        if self.private is not None and any(ref.call_id not in failed for ref in refs):
            try:
                private = await self.private.channel_for(turn.channel_url, turn.user_id)
            except RelayError as exc:
                log.warning("no 1:1 channel with %s for turn %s: %s", turn.user_id, turn.turn_id, exc)
                failed |= {ref.call_id: _NOT_SENT for ref in refs if ref.call_id not in failed}
                notes = [await self._note(turn, texts.NOT_SENT_PRIVATELY, language, "not-sent")]
        notes = [*turn.refusal_outs(), *finishing, *notes]
        paused = PausedTurn(
            turn_id=turn.turn_id,
            step=turn.step,
            channel_url=turn.channel_url,
            user_id=turn.user_id,
            created_at=time.time(),
            prompt=turn.prompt,
            message_ids=list(turn.message_ids),
            files=list(turn.files),
            name=turn.name,
            agent=turn.agent,
            added=messages,
            history_len=turn.history_len,
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
        recorded = await self.record(turn, "paused", began, turn.used, calls)
        if not paused.sent_calls:  # nothing to wait for: go on at once
            await self.store.save_paused(paused, outbox=notes, recorded=recorded)
            return True
        context = ApprovalContext(
            language=language,
            timezone=timezone,
            backends=self.backends,
            user_id=paused.user_id,
            descriptions={**self.tool_descriptions(), **{n: t.description for n, t in declared.items()}},
            may_remember=self.private is not None and private is None and not quoted,
        )
        asking = await device_requests(paused, context)
        outbox: list[TextOut | StreamOut | RpcOut] = [*notes, *asking]
        if private is not None:
            outbox = [*notes, *(item.model_copy(update={"channel_url": private}) for item in asking)]
            confirm = any(item.request.method == CONFIRM_METHOD for item in asking)
            said = texts.SENT_PRIVATELY_CONFIRM if confirm else texts.SENT_PRIVATELY
            outbox.append(await self._note(turn, said, language, "sent-privately"))
        await self.store.save_paused(paused, outbox=outbox, consumed=consumed, recorded=recorded)
        return False

    async def _note(self, turn: TurnStep, text: Text, language: Language, kind: str) -> TextOut:
        """A line for the conversation's channel naming the person, without anything the requests ask."""
        assert self.private is not None
        name = await self.private.name_of(turn.user_id)
        return TextOut(text=text(language, name=name), dedup_id=f"{turn.turn_id}:{turn.step}:{kind}")


_STOPPED_UNSAID = "(The user stopped this answer before any of it was shown.)"
"""The history's answer of a turn stopped before it showed any text (a model reads it next turn)."""

_NOT_SENT = ServerFailure(
    failed="This request could not be delivered to the user's private 1:1 chat with the assistant, and "
    "it was not shown in this group channel either, so nothing was asked or done. Tell the user; they "
    "can ask again in their 1:1 chat with the assistant."
)
