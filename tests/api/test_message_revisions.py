"""A person's edits and deletions of their messages, through signed Sendbird webhooks.

The payloads follow Sendbird's group channel webhook events
(https://sendbird.com/docs/chat/v3/platform-api/webhook/events/group-channel): a
``group_channel:message_update`` carries the changed message as a ``message_send`` does (``type``,
``sender``, ``payload`` with ``message_id`` and the new ``message``, ``channel``); a
``group_channel:message_delete`` carries the deleted message's ``payload.message_id``, its ``sender``
and its ``channel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import BOT, ON_STANDALONE_AND_CLUSTER, webhook_payload
from truloop_assistant.store import keys
from truloop_assistant.store.history import History
from truloop_assistant.store.transcript import Transcript


def message_update(
    text: str, *, message_id: int, user: str = "jeff", channel: str = "ch-1"
) -> dict[str, Any]:
    """A ``group_channel:message_update``: the message as it is now (Sendbird's payload, trimmed)."""
    sent = webhook_payload(text, user=user, channel=channel, message_id=message_id)
    sent["payload"]["updated_at"] = int(time.time() * 1000)
    return {**sent, "category": "group_channel:message_update"}


def message_delete(*, message_id: int, user: str = "jeff", channel: str = "ch-1") -> dict[str, Any]:
    """A ``group_channel:message_delete``: which message of whom went, in which channel."""
    return {
        "category": "group_channel:message_delete",
        "sender": {"user_id": user, "nickname": user, "profile_url": "", "metadata": {}},
        "payload": {"message_id": message_id, "custom_type": "", "created_at": int(time.time() * 1000)},
        "channel": {"name": "assistant", "channel_url": channel, "custom_type": "", "is_distinct": True},
        "app_id": "test-app",
    }


def prompts(messages: list[ModelMessage]) -> list[str]:
    """Every user prompt the model was given in a request, oldest first."""
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


class Held:
    """A model that answers "answered: <the words>", holding the turn "first" until released."""

    def __init__(self) -> None:
        self.started, self.release = asyncio.Event(), asyncio.Event()
        self.seen: list[list[str]] = []

    def model(self) -> FunctionModel:
        async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            said = prompts(messages)
            self.seen.append(said)
            if said[-1] == "first":
                self.started.set()
                await self.release.wait()
            return ModelResponse(parts=[TextPart(f"answered: {said[-1]}")])

        return FunctionModel(fn)


@ON_STANDALONE_AND_CLUSTER
async def test_an_edit_before_its_turn_runs_is_what_the_model_gets(start_server: Any) -> None:
    held = Held()
    async with start_server(model=held.model()) as h:
        await h.user_says("first", message_id=1)
        await asyncio.wait_for(held.started.wait(), 10)
        await h.user_says("meet tomorrow at 3", message_id=2)  # waits behind "first"
        r = await h.post_webhook(message_update("meet tomorrow at 4", message_id=2))
        assert r.status_code == 200 and r.json() == {"status": "revised"}
        lines = {line.message_id: line.text for line in await Transcript(h.redis).recent("ch-1")}
        assert lines["2"] == "meet tomorrow at 4"
        held.release.set()
        await h.replies(2)
        await h.idle()
        assert h.texts("ch-1") == ["answered: first", "answered: meet tomorrow at 4"]
        assert not any("meet tomorrow at 3" in said for seen in held.seen for said in seen)


async def test_a_deletion_before_its_turn_runs_means_the_model_never_sees_it(start_server: Any) -> None:
    held = Held()
    async with start_server(model=held.model()) as h:
        await h.user_says("first", message_id=1)
        await asyncio.wait_for(held.started.wait(), 10)
        await h.user_says("my card number is 1234", message_id=2)
        r = await h.post_webhook(message_delete(message_id=2))
        assert r.status_code == 200 and r.json() == {"status": "revised"}
        # Sendbird re-sends a delivery it got no answer to in time: the same deletion again is harmless.
        assert (await h.post_webhook(message_delete(message_id=2))).json() == {"status": "revised"}
        held.release.set()
        await h.replies(1)
        await h.idle()
        assert h.texts("ch-1") == ["answered: first"]  # no answer for the deleted message
        assert not any("1234" in said for seen in held.seen for said in seen)
        assert "2" not in [line.message_id for line in await Transcript(h.redis).recent("ch-1")]
        # Its admission record stays, with the deletion noted after it.
        decisions = [e["decision"] for e in await _admissions(h, "ch-1") if e["message_id"] == "2"]
        assert decisions == ["deleted", "queued"]


@ON_STANDALONE_AND_CLUSTER
async def test_a_deleted_message_that_ran_leaves_the_transcript_and_the_persons_history(
    start_server: Any,
) -> None:
    held = Held()
    held.release.set()
    async with start_server(model=held.model()) as h:
        await h.user_says("my door code is 4711", message_id=1)
        await h.replies(1)
        await h.user_says("lunch at noon?", message_id=2)
        await h.replies(2)
        await h.idle()
        for _ in range(2):  # a re-sent deletion changes nothing more
            r = await h.post_webhook(message_delete(message_id=1))
            assert r.status_code == 200 and r.json() == {"status": "revised"}
        assert [line.message_id for line in await Transcript(h.redis).recent("ch-1")] == [None, "2", None]
        r = await h.post_webhook(message_update("lunch at one?", message_id=2))
        assert r.json() == {"status": "revised"}
        history = await History(h.redis, max_messages=100).load("ch-1", "jeff")
        assert prompts(history) == ["lunch at one?"]

        await h.user_says("what did I tell you?", message_id=3)
        await h.replies(3)
        assert held.seen[-1] == ["lunch at one?", "what did I tell you?"]  # not the code, nor noon
        lines = await Transcript(h.redis).recent("ch-1")
        assert [line.text for line in lines if line.user_id == "jeff"] == [
            "lunch at one?",
            "what did I tell you?",
        ]


async def test_an_edit_too_long_to_run_drops_the_waiting_message_and_says_so(start_server: Any) -> None:
    held = Held()
    async with start_server(model=held.model(), max_message_chars=100) as h:
        await h.user_says("first", message_id=1)
        await asyncio.wait_for(held.started.wait(), 10)
        await h.user_says("short question", message_id=2)
        r = await h.post_webhook(message_update("x" * 150, message_id=2))
        assert r.status_code == 200 and r.json() == {"status": "revised"}
        await h.sendbird.wait_for(lambda msgs: any("100" in m.text for m in msgs if m.channel_url == "ch-1"))
        held.release.set()
        await h.replies(2)  # the notice and the first answer
        await h.idle()
        assert not any("short question" in said for seen in held.seen for said in seen)
        assert "answered: short question" not in h.texts("ch-1")


async def test_the_assistants_own_updates_are_ignored_without_touching_the_conversation(
    start_server: Any,
) -> None:
    held = Held()
    held.release.set()
    async with start_server(model=held.model()) as h:
        await h.user_says("hello", message_id=1)
        await h.replies(1)
        await h.idle()
        tag = keys.conversation_tag("ch-1")
        settled = message_update("Answered.", message_id=77, user=BOT)
        settled["custom_type"] = settled["payload"]["custom_type"] = "agent-rpc-settled"
        # A request message updated by someone's app (the sender is the person, the type is ours).
        by_app = message_update("Checking…", message_id=78)
        by_app["payload"]["custom_type"] = "agent-rpc"
        answer = message_delete(message_id=79, user=BOT)
        async with _commands(h) as seen:
            for own in (settled, by_app, answer):
                r = await h.post_webhook(own)
                assert r.status_code == 200 and r.json() == {"status": "ignored"}
        assert any("revisions-test-end" in c for c in seen)  # MONITOR saw the block through
        assert not [c for c in seen if tag in c]
        assert len(await Transcript(h.redis).recent("ch-1")) == 2
        async with _commands(h) as seen:  # a person's edit does reach the conversation
            assert (await h.post_webhook(message_update("hi", message_id=1))).json() == {"status": "revised"}
        assert [c for c in seen if tag in c]


async def test_a_malformed_edit_or_deletion_is_a_400_and_a_bad_signature_a_401(start_server: Any) -> None:
    async with start_server() as h:
        broken: list[dict[str, Any]] = []
        for good in (message_update("hi", message_id=5), message_delete(message_id=5)):
            broken += [
                {**good, "payload": {**good["payload"], "message_id": "5"}},
                {**good, "payload": {k: v for k, v in good["payload"].items() if k != "message_id"}},
                {**good, "payload": None},
                {k: v for k, v in good.items() if k != "channel"},
                {**good, "sender": {"user_id": ""}},
            ]
        for body in broken:
            r = await h.post_webhook(body)
            assert r.status_code == 400, (body, r.text)
            assert r.json()["error"]["code"] == "invalid_webhook"
        r = await h.post_webhook(message_delete(message_id=5), signature="0" * 64)
        assert r.status_code == 401
        # A file's update has no text to take: acknowledged.
        picture = {**message_update("", message_id=6), "type": "FILE"}
        assert (await h.post_webhook(picture)).json() == {"status": "ignored"}


async def _admissions(h: Any, channel: str) -> list[dict[str, Any]]:
    from truloop_assistant.store.admissions import recent

    return await recent(h.redis, channel)


@contextlib.asynccontextmanager
async def _commands(h: Any) -> Any:
    """Every command Redis ran while the block ran (``MONITOR``), as text."""
    seen: list[str] = []
    ready, through = asyncio.Event(), asyncio.Event()
    marker = "revisions-test-end"

    async def watch() -> None:
        async with h.redis.monitor() as monitor:
            ready.set()
            async for command in monitor.listen():
                seen.append(str(command.get("command", "")))
                if marker in seen[-1]:
                    through.set()

    task = asyncio.create_task(watch())
    await asyncio.wait_for(ready.wait(), 5)
    try:
        yield seen
    finally:
        await h.redis.get(marker)  # once MONITOR shows this, it has shown everything before it
        await asyncio.wait_for(through.wait(), 5)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
