"""An answer shown while the model writes it: one step's streamed messages, grown in place.

The model's text (pydantic-ai's ``event_stream_handler`` events) goes to the channel from a task of
its own, so the model never waits on the channel: the first message is posted once its first sentence
is complete (or ``FIRST_AFTER_S`` after the first text), then updated in place with the text so far at
most once per ``update_s`` (``data`` ``{"streaming":true}``; an update the budget cannot spare is
skipped). A text past the message length goes on in a new message. Text the model writes before a
tool call is its own message, finished (``{"streaming":false}``) before the tool runs. A text that is
whole before the channel could be called at all (a model that answers at once) is not streamed: it
goes out whole, as without streaming.

The final text is never sent from here: the step's end puts a :class:`~..store.outbox.StreamOut` in
the outbox (:meth:`StreamSender.ending`), so it is retried and survives a crash like any answer. The
ids of the streamed messages are kept in Redis as they are posted; a re-run of the step (its worker
died) updates those messages instead of posting new ones, and deletes the ones it no longer needs.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import (
    AgentStreamEvent,
    NativeToolCallPart,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import FunctionModel

from ..channels.base import ChannelSendError, StreamingChannel
from ..channels.parts import split_text
from ..store.outbox import StreamOut
from ..store.streamed import StreamedMessages

log = logging.getLogger(__name__)

FIRST_AFTER_S = 1.0
"""The first message goes out this long after the first text, if no sentence was complete before."""
CLOSE_TIMEOUT_S = 15.0
"""How long the step's end waits for a channel call still under way before it lets it go."""

_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s|[。！？]")


def can_stream(model: Model | str | None) -> bool:
    """Whether the model's answers can be streamed (a test's function model may have no stream)."""
    if isinstance(model, FunctionModel):
        return model.stream_function is not None
    if isinstance(model, FallbackModel):
        return all(can_stream(m) for m in model.models)
    return isinstance(model, Model)


@dataclass(frozen=True)
class Streaming:
    """What every step's :class:`StreamSender` shares: the channel, the ids' store and the pace."""

    channel: StreamingChannel
    messages: StreamedMessages
    update_s: float
    max_chars: int

    def sender(self, channel_url: str, turn_id: str, step: int, shown: Callable[[str], None]) -> StreamSender:
        return StreamSender(self, channel_url, turn_id, step, shown)


@dataclass(frozen=True)
class Ending:
    """A step's streamed messages as its end leaves them: what the outbox finishes, and whether that
    includes the step's final text (else it is sent whole, as without streaming)."""

    items: list[StreamOut]
    covers_text: bool


@dataclass
class _Message:
    message_id: int
    shown: str
    """The text the channel shows now (as far as we know)."""


@dataclass
class _Run:
    """The messages one model response's text was streamed into."""

    messages: list[_Message] = field(default_factory=list)
    text: str = ""
    final: bool = False
    """Finished for good (``streaming`` false) already."""


class StreamSender:
    """One step's streamed text: feed it :meth:`handle` as the run's event handler, then :meth:`close`
    it and put :meth:`ending` in the step's outbox."""

    def __init__(
        self, streaming: Streaming, channel_url: str, turn_id: str, step: int, shown: Callable[[str], None]
    ) -> None:
        self.streaming = streaming
        self.channel_url = channel_url
        self.turn_id = turn_id
        self.step = step
        self.shown = shown
        """Told (with the channel) when the first text shows: the typing indicator stops."""
        self._earlier: dict[int, int] | None = None
        """Index -> message id an earlier run of this step streamed into (read once, when needed)."""
        self._runs: list[_Run] = [_Run()]
        self._count = 0  # messages this run posted or took over, across its runs
        self._text = ""  # the current response's text so far
        self._first_at: float | None = None
        self._sentence = False
        self._pushed = ""
        self._pushed_at = 0.0
        self._changed = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._started = False  # the pump got to run (it may be in a channel call)
        self._ending = False
        self._broken = False  # the channel failed a post: the rest goes out with the step's end
        self._settled = False  # every message is final, and the step's end has nothing to finish

    # --- pydantic-ai's event stream ---

    async def handle(self, ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        """The run's ``event_stream_handler``: one call per model response (and per tool node)."""
        fresh, tool_call = True, False
        async for event in events:
            delta = ""
            if isinstance(event, PartStartEvent):
                if isinstance(event.part, TextPart):
                    delta = event.part.content
                elif isinstance(event.part, ToolCallPart | NativeToolCallPart):
                    tool_call = True
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                delta = event.delta.content_delta
            if delta:
                if fresh:  # a new response: it replaces an earlier one's text that was not finished
                    self._restart()
                    fresh = False
                self._add(delta)
        if tool_call:
            await self._finish_run()

    def _restart(self) -> None:
        self._text, self._first_at, self._sentence, self._pushed = "", None, False, ""

    def _add(self, delta: str) -> None:
        tail = self._text[-2:]
        self._text += delta
        if self._first_at is None:
            self._first_at = time.monotonic()
        if not self._sentence and _SENTENCE_END.search(tail + delta):
            self._sentence = True
        if self._pump is None and not self._broken:
            self._pump = asyncio.create_task(self._run_pump(), name=f"stream:{self.turn_id}")
        self._changed.set()

    # --- the channel's side, in a task of its own ---

    def _due(self) -> float | None:
        """Seconds until the channel is to be told (0: now; None: nothing to tell)."""
        if not self._text.strip() or self._broken:
            return None
        if not self._runs[-1].messages:
            if self._sentence:
                return 0.0
            assert self._first_at is not None
            return self._first_at + FIRST_AFTER_S - time.monotonic()
        if self._text == self._pushed:
            return None
        return self._pushed_at + self.streaming.update_s - time.monotonic()

    async def _run_pump(self) -> None:
        self._started = True
        try:
            while not self._ending:
                wait = self._due()
                if wait is not None and wait <= 0:
                    await self._push(streaming=True)
                    continue
                self._changed.clear()
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), wait)
        except Exception:  # Redis, say: the rest of the answer goes out with the step's end
            log.warning("streaming into %s stopped", self.channel_url, exc_info=True)
            self._broken = True

    async def _push(self, *, streaming: bool) -> None:
        """Show the current text: each of its parts in its message, posting those not yet shown."""
        text, run = self._text, self._runs[-1]
        self._pushed, self._pushed_at = text, time.monotonic()
        for index, part in enumerate(split_text(text.rstrip(), self.streaming.max_chars)):
            if index < len(run.messages):
                message = run.messages[index]
                if message.shown != part or not streaming:
                    if await self._update(message.message_id, part, streaming=streaming):
                        message.shown = part
            elif (message_id := await self._post(part, streaming=streaming)) is not None:
                run.messages.append(_Message(message_id, part))
            else:
                return

    async def _update(self, message_id: int, text: str, *, streaming: bool) -> bool:
        try:
            return await self.streaming.channel.update_streamed(
                self.channel_url, message_id, text, streaming=streaming
            )
        except ChannelSendError as exc:  # the final text goes out with the step's end
            log.warning("could not finish message %s in %s: %s", message_id, self.channel_url, exc)
            return False

    async def _post(self, text: str, *, streaming: bool) -> int | None:
        """A new message of the answer, or the one an earlier run of the step posted in its place."""
        index = self._count
        if self._earlier is None:
            self._earlier = await self.streaming.messages.of_step(self.channel_url, self.turn_id, self.step)
        message_id = self._earlier.get(index)
        if message_id is not None:
            await self._update(message_id, text, streaming=streaming)
        else:
            try:
                message_id = await self.streaming.channel.post_streamed(
                    self.channel_url,
                    text,
                    dedup_id=f"{self.turn_id}:{self.step}:stream:{index}",
                    streaming=streaming,
                )
            except ChannelSendError as exc:
                log.warning("could not stream into %s: %s", self.channel_url, exc)
                message_id = None
            if message_id is None:  # not shown, or shown without an id to update: the end sends it
                self._broken = True
                return None
            await self.streaming.messages.note(self.channel_url, self.turn_id, self.step, index, message_id)
        self._count += 1
        if index == 0:
            self.shown(self.channel_url)
        return message_id

    async def _stop_pump(self) -> None:
        """Stop the pump: at once if it never ran, else once its channel call (if any) is over."""
        pump, self._pump = self._pump, None
        if pump is None:
            return
        self._ending = True
        self._changed.set()
        if not self._started:
            pump.cancel()
        # asyncio.wait, not wait_for: a cancellation of the step itself still goes through.
        _, pending = await asyncio.wait({pump}, timeout=CLOSE_TIMEOUT_S)
        for late in pending:
            late.cancel()
        self._ending = False

    async def _finish_run(self) -> None:
        """Text before a tool call: its own message(s), finished before the tool runs."""
        await self._stop_pump()
        run = self._runs[-1]
        if self._text.strip() and not self._broken:
            if run.messages:  # one update per interval, the last one too
                await asyncio.sleep(max(0.0, self._pushed_at + self.streaming.update_s - time.monotonic()))
            await self._push(streaming=False)
            parts = split_text(self._text.rstrip(), self.streaming.max_chars)
            run.final = len(run.messages) == len(parts) and all(
                m.shown == p for m, p in zip(run.messages, parts, strict=True)
            )
        run.text = self._text
        self._runs.append(_Run())
        self._restart()

    # --- the step's end ---

    async def close(self) -> None:
        """The run is over (answered, paused or failed): no more channel calls from here."""
        await self._stop_pump()
        self._ending = True

    async def ending(self, final_text: str | None, *, stopped: bool = False) -> Ending:
        """What the step's outbox finishes: streamed messages not finished yet get their final text
        (``final_text``, the answer or the apology, for the last ones; None: the step paused, or was
        ``stopped``: the text so far, its last update marked stopped and sent at once), and those an
        earlier run of the step left over are deleted."""
        runs = self._runs
        runs[-1].text = self._text
        if self._earlier is None:
            self._earlier = await self.streaming.messages.of_step(self.channel_url, self.turn_id, self.step)
        leftover = [mid for index, mid in sorted(self._earlier.items()) if index >= self._count]
        items = [
            self._out(run.text.rstrip(), run.messages, f"run{number}")
            for number, run in enumerate(runs[:-1])
            if run.messages and not run.final
        ]
        last = runs[-1]
        if not last.messages and not leftover:
            self._settled = not items
            return Ending(items, covers_text=False)
        text = final_text if final_text is not None else (last.text.rstrip() if last.messages else "")
        end = self._out(text, last.messages, "end", leftover)
        if stopped:
            end = end.model_copy(update={"stopped": True, "not_before": 0.0})
        items.append(end)
        return Ending(items, covers_text=final_text is not None)

    def shown_text(self) -> str:
        """The text of this step the channel shows (or is to show once its end is delivered): each
        response's that was streamed into a message, the current one as far as it was written."""
        self._runs[-1].text = self._text
        return "\n\n".join(run.text.strip() for run in self._runs if run.messages and run.text.strip())

    async def forget(self) -> None:
        """After the step's end was stored: when its messages needed nothing more from it, their ids are
        not needed either (a turn given up later must not take them for a half answer)."""
        if self._settled and self._count:
            await self.streaming.messages.finished(self.channel_url, self.turn_id, self.step)

    def _out(
        self, text: str, messages: list[_Message], name: str, more: list[int] | None = None
    ) -> StreamOut:
        wait = self._pushed_at + self.streaming.update_s - time.monotonic()
        return StreamOut(
            text=text,
            message_ids=[m.message_id for m in messages] + (more or []),
            dedup_id=f"{self.turn_id}:{self.step}:stream-{name}",
            turn_id=self.turn_id,
            step=self.step,
            not_before=time.time() + max(0.0, wait),
        )
