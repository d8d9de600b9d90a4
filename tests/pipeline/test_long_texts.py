"""Texts longer than Sendbird takes arrive as consecutive messages, in order, each once; a text
Sendbird refuses for good is kept as a dead letter with Sendbird's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.commands.test_inspect import inspect
from tests.fakes.sendbird import SentMessage
from tests.pipeline.test_typing import eventually
from truloop_assistant.channels.parts import split_text
from truloop_assistant.operations.inspection import as_text, conversation_report
from truloop_assistant.store import keys
from truloop_assistant.store.history import History
from truloop_assistant.store.ledger import Ledger


def long_answer(chars: int) -> str:
    """Paragraphs of numbered sentences, ``chars`` characters long (the last word fills it up)."""
    paragraphs: list[str] = []
    n = 0
    while True:
        sentences = []
        for _ in range(6):
            n += 1
            sentences.append(f"Sentence number {n} says something worth reading about the week ahead.")
        paragraph = " ".join(sentences)
        if len("\n\n".join([*paragraphs, paragraph])) > chars:
            text = "\n\n".join(paragraphs)
            return f"{text} {'z' * (chars - len(text) - 1)}"
        paragraphs.append(paragraph)


def answers_with(text: str) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    return FunctionModel(fn)


def assert_whole_once(parts: list[SentMessage], text: str, limit: int) -> None:
    """The parts are the text, in order, each part once and within the limit, cut between words (the
    whitespace at a cut left out) and after a sentence where one ends within the limit."""
    assert all(len(p.text) <= limit for p in parts)
    assert " ".join(p.text for p in parts).split() == text.split()
    assert all(p.text.endswith(".") for p in parts[:-1])
    dedup_ids = [p.body["dedup_id"] for p in parts]
    assert len(set(dedup_ids)) == len(dedup_ids)


async def test_a_12000_character_answer_arrives_as_consecutive_messages_in_order_each_once(
    start_server: Any,
) -> None:
    text = long_answer(12_000)
    assert len(text) == 12_000
    async with start_server(model=answers_with(text)) as h:
        started = time.monotonic()
        await h.user_says("tell me everything about the week")
        await h.sendbird.wait_for(lambda msgs: "\n\n".join(m.text for m in msgs).endswith(text[-200:]))
        took = time.monotonic() - started
        await h.idle()
        parts = h.sendbird.in_channel("ch-1")
        assert len(parts) >= 3
        assert_whole_once(parts, text, 5000)
        assert "\n\n".join(p.text for p in parts) == text  # cut between paragraphs
        # The history keeps the answer whole, once.
        history = await History(h.redis, max_messages=40).load("ch-1", "jeff")
        kept = [p.content for m in history for p in m.parts if isinstance(p, TextPart)]
        assert kept == [text]
    print(f"\n12,000-character answer: {len(parts)} messages in {took:.2f} s")


async def test_a_send_failing_between_parts_is_retried_without_repeating_or_losing_a_part(
    start_server: Any,
) -> None:
    text = long_answer(12_000)
    async with start_server(model=answers_with(text)) as h:
        h.sendbird.outage_after(shown=1, seconds=3)  # longer than a send's own retries
        await h.user_says("tell me everything about the week")
        await h.sendbird.wait_for(
            lambda msgs: "\n\n".join(m.text for m in msgs).endswith(text[-200:]), timeout=30
        )
        await h.idle(timeout=30)
        parts = h.sendbird.in_channel("ch-1")
        assert len(parts) >= 3
        assert_whole_once(parts, text, 5000)
        assert h.sendbird.requests > len(parts)  # the outage was met


async def test_parts_follow_the_configured_limit_and_a_sendbird_repeat_counts_as_sent(
    start_server: Any,
) -> None:
    text = long_answer(1_000)
    async with start_server(model=answers_with(text), sendbird_max_message_chars=300) as h:
        h.sendbird.max_message_length = 300
        h.sendbird.refuse_repeats = True
        h.sendbird.outage_after(shown=2, seconds=3)
        await h.user_says("in short")
        await h.sendbird.wait_for(
            lambda msgs: "\n\n".join(m.text for m in msgs).endswith(text[-100:]), timeout=30
        )
        await h.idle(timeout=30)
        parts = h.sendbird.in_channel("ch-1")
        assert len(parts) >= 4
        assert_whole_once(parts, text, 300)
        assert await h.redis.llen(keys.outbox(keys.conversation_tag("ch-1"))) == 0


async def test_a_text_sendbird_refuses_is_kept_as_a_dead_letter_with_its_code_and_shown_by_inspect(
    start_server: Any, redis_url: str
) -> None:
    text = long_answer(500)
    # The setting says more than the app takes: Sendbird refuses the answer with a 400.
    async with start_server(model=answers_with(text), sendbird_max_message_chars=5000) as h:
        h.sendbird.max_message_length = 200
        await h.user_says("tell me", channel="refused", message_id=900)
        await h.idle()
        await h.user_says("and then?", channel="refused", message_id=901)
        await h.idle()
        assert h.sendbird.in_channel("refused") == []
        report = json.loads(inspect(redis_url, "refused", "--json"))
        [second, first] = report["dead_letters"]
        assert (
            first["code"] == 400700
            and "400700" in first["error"]
            and "maximum message length" in first["error"]
        )
        assert first["event"]["kind"] == "text" and first["event"]["chars"] == len(text)
        assert first["event"]["dedup_id"].startswith("m900:")
        assert second["event"]["dedup_id"].startswith("m901:")
        # The conversation went on: the second turn ran though the first answer was refused.
        text_report = inspect(redis_url, "refused")
        assert "dead letters: 2" in text_report and "code 400700" in text_report
    listed = dead_letters_list(redis_url, "refused")
    assert "2 dead letters, newest first" in listed
    assert (
        f"text message {first['event']['dedup_id']} to the channel, refused, {len(text)} characters" in listed
    )
    assert "HTTP 400, code 400700" in listed


def dead_letters_list(redis_url: str, *args: str) -> str:
    """``truloop-assistant dead-letters list`` as an operator runs it, against the test's Redis."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    done = subprocess.run(
        [sys.executable, "-m", "truloop_assistant.cli", "dead-letters", "list", *args],
        env={**clean, "TRULOOP_REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_inspect_shows_which_part_of_a_long_answer_waits_while_sendbird_is_down(
    start_server: Any,
) -> None:
    text = long_answer(1_000)
    async with start_server(model=answers_with(text), sendbird_max_message_chars=300) as h:
        h.sendbird.max_message_length = 300
        h.sendbird.outage_after(shown=1, seconds=60)
        await h.user_says("in short")
        failures = keys.outbox_failures(keys.conversation_tag("ch-1"))
        await eventually(lambda: h.redis.exists(failures), timeout=30, what="a part could not be sent")
        parts = split_text(text, 300)
        report = await conversation_report(h.redis, Ledger(h.redis), "ch-1", max_message_chars=300)
        n = len(parts)
        assert n >= 4
        next_part, rest = report.waiting.delivery.waiting
        assert (next_part.kind, next_part.part) == ("answer", f"2 of {n}")
        assert (rest.kind, rest.part) == ("answer", f"3-{n} of {n}")
        shown = as_text(report)
        assert f"    answer part 2 of {n}  " in shown and f"    answer parts 3-{n} of {n}  " in shown
        h.sendbird.down_until = 0.0
        await h.sendbird.wait_for(lambda msgs: len(msgs) == len(parts), timeout=30)
        await h.idle(timeout=30)
