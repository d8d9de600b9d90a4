"""Texts longer than the channel takes: cut where a reader would, sent in order, each part once."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, BOT
from truloop_assistant.channels.local import LocalChannel
from truloop_assistant.channels.parts import split_text, units
from truloop_assistant.channels.sendbird import SendbirdChannel, platform_client


def test_a_text_is_cut_at_a_paragraph_else_a_sentence_else_a_word_else_anywhere() -> None:
    paragraphs = "First paragraph, short.\n\nSecond paragraph. It has two sentences."
    assert split_text(paragraphs, 45) == [
        "First paragraph, short.",
        "Second paragraph. It has two sentences.",
    ]
    sentences = "One sentence here. Two sentences here! Three sentences here?"
    assert split_text(sentences, 40) == ["One sentence here. Two sentences here!", "Three sentences here?"]
    assert split_text("회의는 내일입니다。장소는 본관입니다。", 12) == [
        "회의는 내일입니다。",
        "장소는 본관입니다。",
    ]
    assert split_text("words without any stop at all", 12) == ["words", "without any", "stop at all"]
    assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert split_text("fits", 10) == ["fits"] and split_text("", 10) == [""]


def test_every_part_is_within_the_limit_counted_as_sendbird_may_count_it() -> None:
    text = "🙂 " * 40 + "끝."
    parts = split_text(text, 50)
    assert all(units(p) <= 50 for p in parts) and len(parts) > 2
    assert " ".join(parts).split() == text.split()


async def test_a_long_direct_text_arrives_in_parts_and_a_retried_send_shows_none_twice(
    sendbird: FakeSendbird,
) -> None:
    """Relayed messages, invitations and notices go straight to the channel: a retry sends the same
    parts under the same ids, and Sendbird shows each once (whether it answers a repeat 200 or 400)."""
    text = " ".join(f"Sentence {i} of the invitation." for i in range(40))
    sendbird.max_message_length = 200
    async with platform_client(sendbird.url, API_TOKEN) as client:
        sb = SendbirdChannel(client, bot_user_id=BOT, max_message_chars=200, backoff_base_s=0.01)
        await sb.send_text("dm", text, dedup_id="invite:e1:mina")
        sendbird.refuse_repeats = True
        await sb.send_text("dm", text, dedup_id="invite:e1:mina")
    parts = sendbird.in_channel("dm")
    assert len(parts) >= 5 and all(len(p.text) <= 200 for p in parts)
    assert " ".join(p.text for p in parts) == text
    assert [p.body["dedup_id"] for p in parts] == [f"invite:e1:mina:{i + 1}" for i in range(len(parts))]


async def test_the_local_channel_shows_the_parts_sendbird_would(redis: Redis) -> None:
    local = LocalChannel(redis, bot_user_id=BOT, max_message_chars=50)
    text = "A first sentence that is long. A second sentence, longer still, to cut."
    await local.send_text("dev", text, dedup_id="m1:0:answer")
    await local.send_text("dev", text, dedup_id="m1:0:answer")
    shown = [m["message"] for m in await local.messages("dev")]
    assert shown == ["A first sentence that is long.", "A second sentence, longer still, to cut."]
