"""Who a message is for when the webhook does not say: the worker looks the channel up, with retries;
Supergroups are groups whatever their member preview shows."""

from __future__ import annotations

import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.sendbird import without_members
from tests.support import BOT, CALENDAR_ARGS, Harness, webhook_payload

ACK_BUDGET_S = 1.0
"""The webhook's answer, well within Sendbird's 5 s (and the server's own ~2 s promise)."""


def recording(requests: list[str]) -> FunctionModel:
    """Answer ``ok: <prompt>``, or ask the phone's calendar when asked about it; requests recorded."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(f"{info.instructions}\n{messages!r}")
        last = messages[-1].parts
        if any(isinstance(p, ToolReturnPart) for p in last):
            return ModelResponse(parts=[TextPart("done")])
        prompt = str(next(p.content for p in reversed(last) if p.part_kind == "user-prompt"))
        if "calendar" in prompt:
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])
        return ModelResponse(parts=[TextPart(f"ok: {prompt}")])

    return FunctionModel(fn)


async def say(
    h: Harness,
    text: str,
    *,
    channel: str,
    user: str = "jeff",
    mentions: list[str] | None = None,
    is_super: bool = False,
) -> tuple[dict[str, Any], float]:
    """Post a webhook without members; its JSON answer and how long it took."""
    payload = webhook_payload(
        text, user=user, channel=channel, message_id=next(h._message_ids), mentions=mentions
    )
    started = time.perf_counter()
    response = await h.post_webhook(without_members(payload, is_super=is_super))
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return response.json(), elapsed


async def test_a_one_to_one_message_is_answered_while_the_lookup_is_slow(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        h.sendbird.add_channel("dm", ["jeff", BOT])
        h.sendbird.lookup_delay_s = 3.0
        answer, elapsed = await say(h, "hello", channel="dm")
        assert answer == {"status": "queued"}
        assert elapsed < ACK_BUDGET_S, f"the webhook waited {elapsed:.2f} s on the look-up"
        [reply] = await h.replies(1, channel="dm", timeout=20)
        assert reply.text == "ok: hello"


async def test_a_one_to_one_message_is_answered_when_the_lookup_is_rate_limited(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        h.sendbird.add_channel("dm", ["jeff", BOT])
        h.sendbird.lookup_failures = [(429, {"X-RateLimit-RetryAfter": "1"}), (503, {})]
        answer, elapsed = await say(h, "hello", channel="dm")
        assert answer == {"status": "queued"} and elapsed < ACK_BUDGET_S
        [reply] = await h.replies(1, channel="dm", timeout=20)
        assert reply.text == "ok: hello"
        assert h.sendbird.channel_views == 3  # 429, 503, then the members


async def test_a_group_message_decided_by_the_worker_is_context_not_a_turn(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        h.sendbird.add_channel("team", ["jeff", "mina", BOT])
        await say(h, "lunch at noon? " + "x" * 5000, user="mina", channel="team")
        await h.idle()
        # Not a turn: no answer, and no notice about its length in someone else's conversation.
        assert requests == [] and h.sendbird.messages == []
        await say(h, "@Truloop what time is it?", channel="team", mentions=[BOT])
        [reply] = await h.replies(1, channel="team")
        assert reply.text == "ok: @Truloop what time is it?"
        assert '{"by": "user", "user_id": "mina", "text": "lunch at noon?' in requests[-1]


async def test_a_channel_without_the_assistant_is_none_of_its_business(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        h.sendbird.add_channel("theirs", ["jeff", "mina"])
        await say(h, "see you", channel="theirs")
        await h.idle()
        assert requests == [] and h.sendbird.messages == []
        assert await h.redis.llen(_transcript("theirs")) == 0


async def test_a_too_long_one_to_one_message_is_told_so_by_the_worker(start_server: Any) -> None:
    async with start_server(model=recording([])) as h:
        h.sendbird.add_channel("dm", ["jeff", BOT])
        await say(h, "x" * 6000, channel="dm")
        [notice] = await h.replies(1, channel="dm")
        assert "too long (6000 characters)" in notice.text


async def test_a_mention_in_a_supergroup_is_answered_whoever_its_preview_shows(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        people = [f"user{i}" for i in range(12)]
        h.sendbird.add_supergroup("big", [*people, "jeff", BOT], invited=("user3",))
        answer, _ = await say(h, "@Truloop hi all", channel="big", mentions=[BOT], is_super=True)
        assert answer == {"status": "queued"}
        [reply] = await h.replies(1, channel="big")
        assert reply.text == "ok: @Truloop hi all"


async def test_an_unmentioned_message_in_a_supergroup_is_not_a_turn(start_server: Any) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests)) as h:
        # Two members only: the preview is the whole list, and it is still a group.
        h.sendbird.add_supergroup("big", ["jeff", BOT])
        answer, _ = await say(h, "hello", channel="big", is_super=True)
        assert answer == {"status": "ignored"}
        await h.idle()
        assert requests == [] and h.sendbird.messages == []


async def test_a_request_asked_in_a_supergroup_goes_to_the_persons_private_chat(start_server: Any) -> None:
    async with start_server(model=recording([])) as h:
        h.sendbird.add_supergroup("big", ["jeff", BOT])
        await say(h, "@Truloop my calendar please", channel="big", mentions=[BOT], is_super=True)
        await h.sendbird.wait_for(lambda msgs: any(m.is_rpc for m in msgs))
        [asked_in] = [m.channel_url for m in h.sendbird.messages if m.is_rpc]
        assert asked_in != "big" and h.sendbird.channels[asked_in].get("is_distinct")


def _transcript(channel_url: str) -> str:
    from truloop_assistant.store import keys

    return keys.transcript(keys.conversation_tag(channel_url))


async def test_a_lookup_that_never_answers_is_given_up_and_the_conversation_goes_on(
    start_server: Any,
) -> None:
    requests: list[str] = []
    async with start_server(model=recording(requests), sendbird_lookup_patience_s=1.5) as h:
        h.sendbird.add_channel("dm", ["jeff", BOT])
        h.sendbird.lookup_failures = [(503, {})] * 1000
        await say(h, "lost", channel="dm")
        # The next message of the conversation (a mention: a turn whoever is in the channel, and no
        # list of members that would decide the first one too) waits behind it, and runs once it is
        # given up.
        r, _ = await say(h, "mentioned", channel="dm", mentions=[BOT])
        assert r == {"status": "queued"}
        [reply] = await h.replies(1, channel="dm", timeout=20)
        assert reply.text == "ok: mentioned"
        await h.idle()
        assert h.texts("dm") == ["ok: mentioned"] and h.sendbird.channel_views >= 2
