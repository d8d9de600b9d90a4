"""Stopping an answer (``POST /api/v1/agent/turns/stop``): a streaming answer ends where it is within a
second, its message keeps the text so far marked stopped, the model's stream is cancelled, the history
keeps what was shown and the next turn goes on from it; only the caller's own turn stops; a step that
does not stream is stopped too and sends nothing; bad requests are refused, never a 500."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, JWT_SECRET, ON_STANDALONE_AND_CLUSTER, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.store.history import History
from truloop_assistant.store.ledger import Ledger

STREAMING = '{"streaming":true}'
FINISHED = '{"streaming":false}'
STOPPED = '{"streaming":false,"stopped":true}'
GROUP = ["jeff", "mina", BOT]


def bearer(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}"}


async def stop(h: Harness, channel: str, user: str = "jeff") -> str:
    r = await h.http.post("/api/v1/agent/turns/stop", json={"channel_url": channel}, headers=bearer(user))
    assert r.status_code == 200, r.text
    assert int(r.headers["X-RateLimit-Remaining"]) >= 0
    status: str = r.json()["status"]
    return status


class SlowWriter:
    """Writes a long answer a sentence every ``pause_s``; notes each sentence it yielded and whether
    its stream was cancelled. A message that says "thanks" is answered at once, with what it saw."""

    def __init__(self, sentences: int = 60, pause_s: float = 0.15) -> None:
        self.pieces = [f"Sentence {i} is about the week ahead. " for i in range(1, sentences + 1)]
        self.pause_s = pause_s
        self.yielded: list[str] = []
        self.cancelled = asyncio.Event()
        self.seen: list[list[ModelMessage]] = []

    def model(self) -> FunctionModel:
        def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart("".join(self.pieces).rstrip())])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            self.seen.append(messages)
            if "thanks" in _last_prompt(messages):
                yield "You are welcome."
                return
            try:
                for i, piece in enumerate(self.pieces):
                    if i:
                        await asyncio.sleep(self.pause_s)
                    self.yielded.append(piece)
                    yield piece
            except asyncio.CancelledError:
                self.cancelled.set()
                raise

        return FunctionModel(whole, stream_function=stream)


def _last_prompt(messages: list[ModelMessage]) -> str:
    return str(getattr(messages[-1].parts[-1], "content", ""))


def _texts_seen(messages: list[ModelMessage]) -> list[str]:
    return [p.content for m in messages for p in m.parts if isinstance(p, TextPart)]


async def _growing(h: Harness, channel: str, words: str) -> None:
    """Wait until the channel shows a growing answer with ``words`` in it."""

    def grown(_: object) -> bool:
        return any(m.get("data") == STREAMING and words in m["message"] for m in h.sendbird.shown_in(channel))

    await h.sendbird.wait_for(grown, timeout=20)


@ON_STANDALONE_AND_CLUSTER
async def test_a_stop_mid_stream_ends_the_answer_at_once_and_the_next_turn_knows_what_was_said(
    start_server: Any,
) -> None:
    writer = SlowWriter()
    async with start_server(model=writer.model(), stream=True, stream_update_s=0.3) as h:
        await h.user_says("tell me about the week")
        await _growing(h, "ch-1", "Sentence 4")

        asked = time.monotonic()
        assert await stop(h, "ch-1") == "stopped"
        await h.sendbird.wait_for(
            lambda _: [m.get("data") for m in h.sendbird.shown_in("ch-1")] == [STOPPED], timeout=5
        )
        assert time.monotonic() - asked < 1.0  # ended within a second of the stop

        # The model's stream was cancelled, and wrote nothing more after it.
        await asyncio.wait_for(writer.cancelled.wait(), 5)
        written = len(writer.yielded)
        [shown] = h.sendbird.shown_in("ch-1")
        assert shown["message"] == "".join(writer.yielded).rstrip()
        assert "Sentence 4" in shown["message"] and len(writer.yielded) < len(writer.pieces)
        await h.idle()
        await asyncio.sleep(3 * writer.pause_s)  # what a stream still running would have written by now
        assert len(writer.yielded) == written
        assert len(h.sendbird.messages) == 1  # no apology, no second message

        # The history keeps the shown text as the answer; the ledger says the turn was stopped.
        history = await History(h.redis, max_messages=40).load("ch-1", "jeff")
        assert _texts_seen(history) == [shown["message"]]
        [turn] = await Ledger(h.redis).turns("ch-1")
        assert turn.state == "stopped"

        # Nothing runs now; the next turn goes on, with the stopped answer in what the model sees.
        assert await stop(h, "ch-1") == "idle"
        await h.user_says("thanks")
        await h.sendbird.wait_for(
            lambda _: any(m["message"] == "You are welcome." for m in h.sendbird.shown_in("ch-1")), timeout=10
        )
        assert shown["message"] in _texts_seen(writer.seen[-1])


async def test_another_members_stop_does_not_stop_your_answer(start_server: Any) -> None:
    writer = SlowWriter(sentences=12, pause_s=0.1)
    async with start_server(model=writer.model(), stream=True, stream_update_s=0.3) as h:
        await h.user_says("@Truloop tell me about the week", channel="team", members=GROUP, mentions=[BOT])
        await _growing(h, "team", "Sentence 2")

        assert await stop(h, "team", user="mina") == "idle"  # her stop: jeff's turn is not hers
        assert await stop(h, "ch-1", user="jeff") == "idle"  # his stop elsewhere: nothing of his runs there

        def done(_: object) -> bool:
            return [m.get("data") for m in h.sendbird.shown_in("team")] == [FINISHED]

        await h.sendbird.wait_for(done, timeout=20)
        assert h.sendbird.shown_in("team")[0]["message"].rstrip() == "".join(writer.pieces).rstrip()
        assert not writer.cancelled.is_set()


async def test_a_step_that_does_not_stream_is_stopped_too_and_sends_nothing(start_server: Any) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ModelResponse(parts=[TextPart("too late")])

    async with start_server(model=FunctionModel(slow), stream=False) as h:
        await h.user_says("think hard about the week")
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.sleep(0.3)  # the step marks itself running before the model is called: long done

        assert await stop(h, "ch-1") == "stopped"
        await asyncio.wait_for(cancelled.wait(), 2)  # the model request is cancelled
        await h.idle()
        assert h.texts("ch-1") == []
        [turn] = await Ledger(h.redis).turns("ch-1")
        assert turn.state == "stopped"
        history = await History(h.redis, max_messages=40).load("ch-1", "jeff")
        assert len(_texts_seen(history)) == 1  # a note that nothing was said: the history stays valid


async def test_a_stop_needs_a_token_and_a_channel_url(start_server: Any) -> None:
    async with start_server() as h:
        r = await h.http.post("/api/v1/agent/turns/stop", json={"channel_url": "ch-1"})
        assert r.status_code == 401
        assert r.json()["error"]["code"]

        assert await stop(h, "ch-1") == "idle"  # nothing runs

        for body in (
            b"not json",
            b"[]",
            b"{}",
            b'{"channel_url": ""}',
            b'{"channel_url": 7}',
            b'{"channel_url": "ch-1", "turn": "x"}',
            json.dumps({"channel_url": "c" * 500}).encode(),
        ):
            r = await h.http.post(
                "/api/v1/agent/turns/stop",
                content=body,
                headers={**bearer("jeff"), "content-type": "application/json"},
            )
            assert r.status_code == 422, (body, r.text)
            assert r.json()["error"]["code"] == "invalid_body"
            assert r.json()["error"]["message"]
