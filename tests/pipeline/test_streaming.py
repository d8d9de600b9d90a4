"""Answers that stream: the first sentence shows while the model still writes, the message grows in
place (``data`` ``{"streaming":true}``) at most once per interval, and its last update carries the
whole text with ``{"streaming":false}``; text before a tool call is its own message; a long answer
goes on in a new message; a worker killed mid-answer leaves no half message; ``TRULOOP_STREAM=false``
sends whole answers."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird, MessageUpdate, SentMessage
from tests.pipeline.workers import cluster
from tests.support import BOT, idle
from truloop_assistant.agent.offline import build_offline_model
from truloop_assistant.i18n import language_of, texts
from truloop_assistant.i18n import offline as say
from truloop_assistant.store.history import History

STREAMING = '{"streaming":true}'
FINISHED = '{"streaming":false}'


def sentences(n: int, topic: str = "week") -> list[str]:
    return [f"Sentence {i} is about the {topic} ahead. " for i in range(1, n + 1)]


class Writer:
    """A model that writes its answer a sentence at a time, ``pause_s`` apart, and notes when it
    finished; with ``before_tool``, it first writes that, calls the clock tool, then answers."""

    def __init__(self, answer: list[str], pause_s: float, before_tool: list[str] | None = None) -> None:
        self.answer = answer
        self.pause_s = pause_s
        self.before_tool = before_tool
        self.finished: list[float] = []

    @property
    def text(self) -> str:
        return "".join(self.answer).rstrip()

    def model(self) -> FunctionModel:
        def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart(self.text)])

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            tool_ran = any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
            pieces = self.before_tool if self.before_tool and not tool_ran else self.answer
            for i, piece in enumerate(pieces):
                if i:
                    await asyncio.sleep(self.pause_s)
                yield piece if i < len(pieces) - 1 else piece.rstrip()
            if pieces is self.before_tool:
                yield {1: DeltaToolCall("get_current_datetime", "{}", tool_call_id="clock-1")}
            self.finished.append(time.monotonic())

        return FunctionModel(whole, stream_function=stream)


def updates_of(sendbird: FakeSendbird, message: SentMessage) -> list[MessageUpdate]:
    message_id = sendbird.messages.index(message) + 1
    return [u for u in sendbird.updates if u.message_id == message_id]


async def finished(sendbird: FakeSendbird, channel: str, n: int) -> list[dict[str, Any]]:
    """Wait until ``n`` messages show in the channel, every one finished; what they show."""

    def done(_: list[SentMessage]) -> bool:
        shown = sendbird.shown_in(channel)
        return len(shown) >= n and all(m.get("data") == FINISHED for m in shown)

    await sendbird.wait_for(done, timeout=20)
    return sendbird.shown_in(channel)


async def test_an_answer_shows_its_first_sentence_early_and_grows_in_place_to_the_whole_text(
    start_server: Any,
) -> None:
    writer = Writer(sentences(20), pause_s=0.2)  # 20 sentences over about 4 s
    async with start_server(model=writer.model(), stream=True) as h:
        await h.user_says("tell me about the week")
        [shown] = await finished(h.sendbird, "ch-1", 1)
        await h.idle()
        [first] = h.sendbird.in_channel("ch-1")
        assert first.body["data"] == STREAMING
        assert first.text == "Sentence 1 is about the week ahead."  # posted at its first sentence
        [model_done] = writer.finished
        assert first.at <= model_done - 1.5

        updates = updates_of(h.sendbird, first)
        assert len(updates) >= 2
        times = [first.at, *(u.at for u in updates)]
        assert all(later - earlier >= 0.8 for earlier, later in itertools.pairwise(times))
        assert [u.body["data"] for u in updates] == [STREAMING] * (len(updates) - 1) + [FINISHED]
        growing = [u.body["message"] for u in updates]
        assert all(writer.text.startswith(text) for text in growing)
        assert shown["message"] == writer.text == growing[-1]
        assert shown["data"] == FINISHED
        assert len(h.sendbird.messages) == 1

        # The typing indicator ends once the text shows: no start after it, and none left on.
        assert not any(t.started and t.at > first.at for t in h.sendbird.typing_in("ch-1"))
        assert not h.sendbird.is_typing("ch-1")
        # The history keeps the final text, once.
        history = await History(h.redis, max_messages=40).load("ch-1", "jeff")
        assert [p.content for m in history for p in m.parts if isinstance(p, TextPart)] == [writer.text]


async def test_text_before_a_tool_call_is_its_own_message_finished_before_the_answer(
    start_server: Any,
) -> None:
    before = ["Let me look at the clock first. ", "It takes a moment. ", "Almost there. "]
    writer = Writer(sentences(10, "day"), pause_s=0.2, before_tool=before)
    async with start_server(model=writer.model(), stream=True) as h:
        await h.user_says("what day is it, and what is ahead?")
        shown = await finished(h.sendbird, "ch-1", 2)
        await h.idle()
        first, second = h.sendbird.in_channel("ch-1")
        assert [m["message"] for m in shown] == ["".join(before).rstrip(), writer.text]
        assert [m["data"] for m in shown] == [FINISHED, FINISHED]
        # The first message was finished before the answer's first text showed.
        [finish] = [u for u in updates_of(h.sendbird, first) if u.body["data"] == FINISHED]
        assert finish.at < second.at
        assert len(h.sendbird.messages) == 2


async def test_an_answer_past_the_message_length_goes_on_in_a_new_message(start_server: Any) -> None:
    writer = Writer(sentences(24), pause_s=0.05)  # about 900 characters
    async with start_server(
        model=writer.model(), stream=True, sendbird_max_message_chars=300, stream_update_s=0.3
    ) as h:
        h.sendbird.max_message_length = 300
        await h.user_says("tell me about the week")
        await h.sendbird.wait_for(lambda msgs: len(msgs) >= 3, timeout=20)
        await h.idle()
        shown = h.sendbird.shown_in("ch-1")
        assert len(shown) >= 3
        assert all(len(m["message"]) <= 300 and m["data"] == FINISHED for m in shown)
        assert " ".join(m["message"] for m in shown).split() == writer.text.split()
        assert all(m.body["data"] == STREAMING for m in h.sendbird.messages)  # each one grew in place


async def test_a_turn_that_runs_out_of_time_mid_answer_finishes_the_half_message_with_the_apology(
    start_server: Any,
) -> None:
    writer = Writer(sentences(20), pause_s=0.2)  # about 4 s: longer than the turn may take
    prompt = "tell me about the week"
    async with start_server(model=writer.model(), stream=True, turn_timeout_s=1.5) as h:
        await h.user_says(prompt)
        [shown] = await finished(h.sendbird, "ch-1", 1)
        await h.idle()
        [half] = h.sendbird.in_channel("ch-1")
        assert half.body["data"] == STREAMING  # the answer had begun to show
        assert shown["message"] == texts.TIMED_OUT(language_of(prompt))
        assert shown["data"] == FINISHED
        assert len(h.sendbird.messages) == 1


async def test_with_streaming_off_an_answer_is_sent_whole_once_without_data(start_server: Any) -> None:
    writer = Writer(sentences(5), pause_s=0.1)
    async with start_server(model=writer.model(), stream=False) as h:
        await h.user_says("tell me about the week")
        [answer] = await h.replies(1)
        await h.idle()
        assert answer.text == writer.text
        assert "data" not in answer.body
        assert h.sendbird.updates == []
        assert h.sendbird.calls.get("send") == 1


async def test_a_worker_killed_mid_answer_leaves_one_finished_message_with_the_whole_text(
    redis: Any, redis_url: str, sendbird: FakeSendbird
) -> None:
    text = " ".join(s.strip() for s in sentences(12, "month"))
    llm = FakeLLM(piece_delay_s=0.05, script=lambda messages: {"role": "assistant", "content": text})
    async with cluster(redis_url, sendbird, llm, queue="stream-crash", stream=True) as c:
        first = await c.start_worker()
        await c.user_says("tell me about the month", channel="stream-1", message_id=5151)
        [growing] = await sendbird.wait_count(1, "stream-1", timeout=30)  # the answer began to show
        await c.kill(first)
        assert growing.body["data"] == STREAMING
        assert sendbird.shown_in("stream-1")[0]["message"] != text  # killed half-way

        await c.start_worker()
        await finished(sendbird, "stream-1", 1)
        await idle(redis, queue="stream-crash", timeout=30)
        shown = sendbird.shown_in("stream-1")
        assert [m["message"] for m in shown] == [text]  # one message, the whole text, once
        assert [m["data"] for m in shown] == [FINISHED]
        assert not any(json.loads(m.shown["data"])["streaming"] for m in sendbird.messages)
        assert len(llm.requests) == 2  # the dead worker's run and the one that finished it


async def test_growing_updates_that_sendbird_refuses_are_skipped_and_the_final_text_still_arrives(
    start_server: Any,
) -> None:
    writer = Writer(sentences(20), pause_s=0.2)
    async with start_server(model=writer.model(), stream=True) as h:
        h.sendbird.throttle("update", 2)  # the first two updates are answered 429
        await h.user_says("tell me about the week")
        [shown] = await finished(h.sendbird, "ch-1", 1)
        await h.idle()
        assert h.sendbird.limited == ["update", "update"]
        assert shown["message"] == writer.text
        # A growing update is tried once: none was sent again at once after its 429.
        updates = [c.at for c in h.sendbird.call_log if c.kind == "update"]
        assert all(b - a >= 0.5 for a, b in itertools.pairwise(updates[:3]))


async def test_the_dev_channel_shows_the_message_growing_in_place(start_server: Any) -> None:
    writer = Writer(sentences(15), pause_s=0.2)
    async with start_server(model=writer.model(), stream=True, channel="local") as h:
        r = await h.http.post(
            "/dev/api/channels/dev-1/messages", json={"user_id": "jeff", "message": "the week?"}
        )
        assert r.status_code == 202, r.text
        seen: list[dict[str, Any]] = []
        async with asyncio.timeout(20):
            while not seen or seen[-1]["data"] != FINISHED:
                r = await h.http.get("/dev/api/channels/dev-1/messages")
                bot = [m for m in r.json()["messages"] if m["user_id"] == h.settings.sendbird_bot_user_id]
                if bot and (not seen or bot[-1] != seen[-1]):
                    seen.append(bot[-1])
                await asyncio.sleep(0.1)
        await h.idle()
        assert len({m["message_id"] for m in seen}) == 1  # one message, changed in place
        assert seen[0]["data"] == STREAMING and len(seen) >= 3
        assert seen[-1]["message"] == writer.text
        assert seen[-1]["updated_at"] >= seen[-1]["created_at"]
        assert [m.get("updated_at", 0) for m in seen] == sorted(m.get("updated_at", 0) for m in seen)
        # Listed again once changed, after its own id.
        r = await h.http.get("/dev/api/channels/dev-1/messages", params={"after": seen[-1]["message_id"]})
        assert [m["message"] for m in r.json()["messages"]] == [writer.text]


async def test_a_message_that_arrives_while_an_answer_streams_is_answered_after_it_finishes(
    start_server: Any,
) -> None:
    writer = Writer(sentences(10), pause_s=0.2)
    async with start_server(model=writer.model(), stream=True) as h:
        await h.user_says("tell me about the week")
        await h.sendbird.wait_count(1, "ch-1")  # the first answer shows and grows
        await h.user_says("and the week after?")
        shown = await finished(h.sendbird, "ch-1", 2)
        await h.idle()
        assert [m["message"] for m in shown] == [writer.text, writer.text]
        first, second = h.sendbird.in_channel("ch-1")
        [done] = [u for u in updates_of(h.sendbird, first) if u.body["data"] == FINISHED]
        assert done.at < second.at  # one answer at a time, in order
        assert [m.body["dedup_id"] for m in (first, second)] == ["m1000:0:stream:0", "m1001:0:stream:0"]


async def test_in_a_group_channel_the_answer_to_a_mention_streams_in_that_channel(start_server: Any) -> None:
    writer = Writer(sentences(10), pause_s=0.2)
    group = ["jeff", "mina", BOT]
    async with start_server(model=writer.model(), stream=True) as h:
        await h.user_says("@Truloop the week?", channel="team", members=group, mentions=[BOT])
        [shown] = await finished(h.sendbird, "team", 1)
        await h.idle()
        assert shown["message"] == writer.text
        [message] = h.sendbird.in_channel("team")
        assert message.body["data"] == STREAMING and len(updates_of(h.sendbird, message)) >= 2
        assert len(h.sendbird.messages) == 1


async def test_the_offline_model_writes_its_answer_a_piece_at_a_time_so_development_shows_it_growing(
    start_server: Any,
) -> None:
    model = build_offline_model(timezone=ZoneInfo("Asia/Seoul"))
    async with start_server(model=model, stream=True) as h:
        await h.user_says("what can you do?")
        [shown] = await finished(h.sendbird, "ch-1", 1)
        await h.idle()
        [first] = h.sendbird.in_channel("ch-1")
        assert first.body["data"] == STREAMING  # posted while the offline model still wrote
        assert len(first.body["message"]) < len(shown["message"])
        assert shown["message"] == say.CAPABILITIES("en")  # one message, grown to the whole text
