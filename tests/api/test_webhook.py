"""The Sendbird webhook edge: signature, filtering, de-duplication."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, ON_STANDALONE_AND_CLUSTER, sign, webhook_payload

pytestmark = ON_STANDALONE_AND_CLUSTER


def echo_model(prompts: list[str]) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        prompts.append(text)
        return ModelResponse(parts=[TextPart(f"echo: {text}")])

    return FunctionModel(fn)


async def test_signed_message_is_answered(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        r = await h.user_says("hello there", channel="sendbird_group_channel_1/x y")
        assert r.json() == {"status": "queued"}
        [reply] = await h.replies(1, channel="sendbird_group_channel_1/x y")
        assert reply.text == "echo: hello there"  # the model's output, nothing added


async def test_bad_or_missing_signature_is_401_and_nothing_is_queued(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        payload = webhook_payload("hi", message_id=7)
        body = json.dumps(payload).encode()
        for signature in ("", "deadbeef", sign(body, token="other-token"), sign(body + b" ")):
            r = await h.post_webhook(body, signature=signature)
            assert r.status_code == 401 and r.json()["error"]["code"] == "bad_signature"
        # The same message, signed right, is still new: nothing was marked or queued before.
        r = await h.post_webhook(body)
        assert r.json() == {"status": "queued"}
        await h.replies(1)
        assert prompts == ["hi"]


async def test_signature_is_over_the_raw_bytes(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        # Sendbird escapes "/" and non-ASCII: re-serialising would break the check.
        body = (
            json.dumps(webhook_payload("일정 a/b", message_id=8), ensure_ascii=True)
            .replace("/", "\\/")
            .encode()
        )
        r = await h.post_webhook(body)
        assert r.json() == {"status": "queued"}
        [reply] = await h.replies(1)
        assert reply.text == "echo: 일정 a/b"


async def test_events_the_assistant_does_not_answer_are_ignored(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        bot = webhook_payload("my own answer", user="truloop-assistant", message_id=20)
        rpc_echo = webhook_payload("Checking…", message_id=21)
        rpc_echo["payload"]["custom_type"] = "agent-rpc"
        group_file = {**webhook_payload("", message_id=22, members=["jeff", "mina", BOT]), "type": "FILE"}
        other = {**webhook_payload("x", message_id=23), "category": "group_channel:join"}
        for payload in (bot, rpc_echo, group_file, other):
            r = await h.post_webhook(payload)
            assert r.status_code == 200 and r.json() == {"status": "ignored"}
        await h.idle()
        assert prompts == [] and h.sendbird.messages == []


async def test_duplicate_deliveries_are_queued_once(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        first = await h.user_says("once", message_id=99)
        again = await asyncio.gather(*(h.user_says("once", message_id=99) for _ in range(5)))
        assert first.json() == {"status": "queued"}
        assert [r.json() for r in again] == [{"status": "duplicate"}] * 5
        await h.replies(1)
        await h.idle()
        assert prompts == ["once"] and len(h.sendbird.messages) == 1


async def test_malformed_webhook_bodies_are_400(start_server: Any) -> None:
    async with start_server(model=echo_model([])) as h:
        for body in (b"{not json", b"[]", b'{"category": 5}'):
            r = await h.post_webhook(body)
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_webhook"
        # The message names what is wrong, where it is in the delivery.
        good = webhook_payload("hello", message_id=41)
        for payload, where in (
            (b"[]", "category: "),
            ({**good, "type": 5}, "type: "),
            (without(good, "sender"), "sender: "),
            (with_field(good, "payload", "message_id", "41"), "payload.message_id: "),
            (with_field(good, "channel", "channel_url", ""), "channel.channel_url: "),
        ):
            r = await h.post_webhook(payload)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["message"].startswith(
                f"the body is not a Sendbird webhook event: {where}"
            )


def without(payload: dict[str, Any], part: str, field: str | None = None) -> dict[str, Any]:
    """The payload with one part (or one field of it) removed."""
    changed = json.loads(json.dumps(payload))
    if field is None:
        del changed[part]
    else:
        del changed[part][field]
    return changed


def with_field(payload: dict[str, Any], part: str, field: str, value: Any) -> dict[str, Any]:
    changed = json.loads(json.dumps(payload))
    changed[part][field] = value
    return changed


async def test_a_user_message_without_channel_sender_or_message_id_is_400_and_nothing_is_queued(
    start_server: Any,
) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        good = webhook_payload("hello", message_id=40)
        broken = [
            with_field(good, "channel", "channel_url", ""),
            without(good, "channel", "channel_url"),
            without(good, "channel"),
            with_field(good, "sender", "user_id", ""),
            without(good, "sender", "user_id"),
            without(good, "sender"),
            with_field(good, "payload", "message_id", True),
            with_field(good, "payload", "message_id", "40"),  # Sendbird sends an integer, never a string
            with_field(good, "payload", "message_id", 0),
            with_field(good, "payload", "message_id", -40),
            with_field(good, "payload", "message_id", 40.0),
            with_field(good, "payload", "message_id", None),
            without(good, "payload", "message_id"),
            without(good, "payload"),
        ]
        for payload in broken:
            r = await h.post_webhook(payload)
            assert r.status_code == 400, (payload, r.text)
            assert r.json()["error"]["code"] == "invalid_webhook"
        await h.idle()
        assert prompts == [] and h.sendbird.messages == []
        # Nothing was marked as seen: the well-formed message is new, and answered once.
        r = await h.post_webhook(good)
        assert r.json() == {"status": "queued"}
        [reply] = await h.replies(1)
        assert reply.text == "echo: hello"


async def test_events_the_assistant_does_not_answer_are_ignored_whatever_their_parts(
    start_server: Any,
) -> None:
    async with start_server(model=echo_model([])) as h:
        admin = without({**webhook_payload("maintenance tonight", message_id=50), "type": "ADMM"}, "sender")
        file_msg = with_field(
            {**webhook_payload("", message_id=51), "type": "FILE"}, "channel", "channel_url", ""
        )
        joined = {
            "category": "group_channel:join",
            "users": [{"user_id": "jeff"}],
            "channel": {"channel_url": "c"},
        }
        for payload in (admin, file_msg, joined):
            r = await h.post_webhook(payload)
            assert r.status_code == 200 and r.json() == {"status": "ignored"}, r.text
        await h.idle()
        assert h.sendbird.messages == []


async def test_members_and_mentions_are_read_whatever_else_their_lists_hold(start_server: Any) -> None:
    prompts: list[str] = []
    async with start_server(model=echo_model(prompts)) as h:
        group = webhook_payload("lunch?", message_id=60, members=["jeff", "mina", BOT])
        group["members"] += [{"nickname": "no id"}, 5, {"user_id": ""}]
        r = await h.post_webhook(group)
        assert r.json() == {"status": "ignored"}  # a group message that does not mention the assistant
        asked = {**webhook_payload("lunch with @bot?", message_id=61, members=["jeff", "mina", BOT])}
        asked["mentioned_users"] = [BOT, None, {"nickname": "x"}]  # a plain id counts as a mention
        r = await h.post_webhook(asked)
        assert r.json() == {"status": "queued"}
        [reply] = await h.replies(1)
        assert reply.text == "echo: lunch with @bot?"
        # Lists that are not lists list nobody: the worker looks the members up, and reads them the same way.
        h.sendbird.add_channel("ch-direct", ["jeff", BOT])
        h.sendbird.channels["ch-direct"]["members"] += [{"nickname": "no id"}, "mina", 5]
        broken = webhook_payload("hi again", message_id=62, channel="ch-direct")
        broken |= {"members": "everyone", "mentioned_users": 7}
        r = await h.post_webhook(broken)
        assert r.json() == {"status": "queued"}  # for the worker to decide
        await h.idle()
        assert h.sendbird.in_channel("ch-direct") == []  # jeff, mina and the assistant: a group, no mention
        h.sendbird.add_channel("ch-one", ["jeff", BOT])
        h.sendbird.channels["ch-one"]["members"] += [{"nickname": "no id"}, 5, None]
        r = await h.post_webhook(
            webhook_payload("hi again", message_id=63, channel="ch-one") | {"members": None}
        )
        assert r.json() == {"status": "queued"}
        await h.replies(1, channel="ch-one")
        await h.idle()
        assert prompts == ["lunch with @bot?", "hi again"]


async def test_a_signed_message_older_than_the_de_duplication_window_is_not_run_again(
    start_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A captured delivery replayed once its message id's de-duplication mark (24 h) is gone."""
    prompts: list[str] = []
    now_ms, hour_ms = int(time.time() * 1000), 3600 * 1000
    caplog.set_level(logging.WARNING, logger="truloop_assistant")
    async with start_server(model=echo_model(prompts)) as h:
        captured = webhook_payload("delete my events", channel="ch-old", message_id=70)
        captured["payload"]["created_at"] = now_ms - 25 * hour_ms
        picture = {**webhook_payload("", channel="ch-old", message_id=71), "type": "FILE"}
        picture["payload"]["created_at"] = now_ms - 48 * hour_ms
        for payload in (captured, picture):
            r = await h.post_webhook(payload)
            assert r.status_code == 200 and r.json() == {"status": "ignored"}, r.text
        await h.idle()
        assert prompts == [] and h.sendbird.messages == []
        replays = [r.getMessage() for r in caplog.records if "ch-old" in r.getMessage()]
        assert len(replays) == 2 and all("older than" in line for line in replays), replays

        # A late delivery within the window, and a message that does not say when it was sent, run.
        late = webhook_payload("late", channel="ch-late", message_id=72, created_at=now_ms - 22 * hour_ms)
        undated = webhook_payload("undated", channel="ch-undated", message_id=73)
        del undated["payload"]["created_at"]
        for payload in (late, undated):
            assert (await h.post_webhook(payload)).json() == {"status": "queued"}
        await h.replies(1, channel="ch-late")
        await h.replies(1, channel="ch-undated")
        assert sorted(prompts) == ["late", "undated"]
