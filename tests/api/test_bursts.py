"""Several messages in a row, through the running server: what a person writes while the assistant is
busy with their earlier message is answered once, as one message the model reads in order; someone
else's message in between keeps its place; at most 20 messages or 8,000 characters go together."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, Harness
from truloop_assistant.operations.inspection import as_text, conversation_report
from truloop_assistant.store import keys
from truloop_assistant.store.history import History
from truloop_assistant.store.ledger import Ledger

GROUP = ["jeff", "mina", BOT]


class HeldModel:
    """Answers "re: <what it read>" (its first 200 characters: one message in the channel); the step
    of a message that says "hold" waits until released."""

    def __init__(self) -> None:
        self.read: list[str] = []
        """The user message each model request ended with, in order."""
        self.holding, self.release = asyncio.Event(), asyncio.Event()

    def model(self) -> FunctionModel:
        async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            text = _last_user_text(messages)
            self.read.append(text)
            if "hold" in text:
                self.holding.set()
                await self.release.wait()
            return ModelResponse(parts=[TextPart(f"re: {text[:200]}")])

        return FunctionModel(answer)


def _last_user_text(messages: list[ModelMessage]) -> str:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return str(next(p.content for p in reversed(last.parts) if isinstance(p, UserPromptPart)))


async def _waiting(h: Harness, channel: str, count: int) -> None:
    """Wait until ``count`` events are in the channel's inbox (the running one among them)."""
    inbox = keys.inbox(keys.conversation_tag(channel))
    async with asyncio.timeout(10):
        while await h.redis.llen(inbox) < count:  # noqa: ASYNC110  (Redis is polled: nothing to await)
            await asyncio.sleep(0.01)


async def _busy_with_a_first_message(h: Harness, model: HeldModel, **where: Any) -> None:
    assert (await h.user_says("hold on, what is on today?", **where)).status_code == 200
    async with asyncio.timeout(10):
        await model.holding.wait()


async def test_messages_written_while_the_assistant_is_busy_get_one_answer(start_server: Any) -> None:
    model = HeldModel()
    async with start_server(model=model.model()) as h:
        await _busy_with_a_first_message(h, model)
        for text in ("meet tomorrow at 3", "actually 4", "call it design review"):
            assert (await h.user_says(text)).status_code == 200
        await _waiting(h, "ch-1", 4)
        model.release.set()

        replies = await h.replies(2)
        await h.idle()
        together = "meet tomorrow at 3\nactually 4\ncall it design review"
        assert model.read == ["hold on, what is on today?", together]  # read once, in order
        assert [m.text for m in h.sendbird.in_channel("ch-1")] == [
            "re: hold on, what is on today?",
            f"re: {together}",
        ]  # exactly one answer for the three
        assert [m.text for m in replies] == h.texts("ch-1")

        # The history keeps them as one user message; the ledger names the turn's three messages.
        history = await History(h.redis, max_messages=40).load("ch-1", "jeff")
        prompts = [p.content for m in history for p in m.parts if isinstance(p, UserPromptPart)]
        assert prompts == ["hold on, what is on today?", together]
        ledger = Ledger(h.redis)
        turns = await ledger.turns("ch-1")
        assert [len(t.message_ids) for t in turns] == [3, 1]
        burst = turns[0]
        assert burst.turn_id == f"m{burst.message_ids[0]}" and burst.state == "answered"
        report = await conversation_report(h.redis, ledger, "ch-1")
        assert f"answers 3 messages: {', '.join(burst.message_ids)}" in as_text(report)
        # Each message's admission is kept, as it was decided.
        assert [a.get("decision") for a in report.waiting.admissions] == ["queued"] * 4


async def test_someone_elses_message_in_between_is_answered_apart_and_in_its_place(
    start_server: Any,
) -> None:
    model = HeldModel()
    team: dict[str, Any] = {"channel": "team", "members": GROUP, "mentions": [BOT]}
    async with start_server(model=model.model()) as h:
        await _busy_with_a_first_message(h, model, **team)
        for user, text in [
            ("jeff", "lunch at noon"),
            ("jeff", "at the noodle place"),
            ("mina", "can I come?"),
            ("jeff", "and invite mina"),
        ]:
            assert (await h.user_says(text, user=user, **team)).status_code == 200
        await _waiting(h, "team", 5)
        model.release.set()

        await h.replies(4, "team")
        await h.idle()
        assert model.read == [
            "hold on, what is on today?",
            "lunch at noon\nat the noodle place",
            "can I come?",
            "and invite mina",  # after mina's: not merged across her message
        ]
        assert len(h.texts("team")) == 4


async def test_more_than_twenty_messages_make_a_second_turn(start_server: Any) -> None:
    model = HeldModel()
    async with start_server(model=model.model(), rate_limit_user="100/minute") as h:
        await _busy_with_a_first_message(h, model)
        for i in range(1, 23):
            assert (await h.user_says(f"item {i}")).status_code == 200
        await _waiting(h, "ch-1", 23)
        model.release.set()

        await h.replies(3)
        await h.idle()
        assert model.read[1:] == [
            "\n".join(f"item {i}" for i in range(1, 21)),
            "item 21\nitem 22",
        ]
        assert len(h.texts("ch-1")) == 3


async def test_more_than_8000_characters_make_a_second_turn(start_server: Any) -> None:
    model = HeldModel()
    long = ["a" * 3000, "b" * 3000, "c" * 3000]
    async with start_server(model=model.model()) as h:
        await _busy_with_a_first_message(h, model)
        for text in [*long, "and one more"]:
            assert (await h.user_says(text)).status_code == 200
        await _waiting(h, "ch-1", 5)
        model.release.set()

        await h.replies(3)
        await h.idle()
        # 6,000 characters fit; the third 3,000 would make 9,000: it starts the next turn.
        assert model.read[1:] == [f"{long[0]}\n{long[1]}", f"{long[2]}\nand one more"]
        assert len(h.texts("ch-1")) == 3
