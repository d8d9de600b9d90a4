"""A conversation's inbox: typed events, in arrival order, a message id accepted once."""

from __future__ import annotations

from redis.asyncio import Redis

from truloop_assistant.store.inbox import EVENT, Inbox, MessageEvent, ResumeEvent


async def test_events_come_back_typed_and_in_order(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    message = MessageEvent(message_id="7", user_id="jeff", text="이번 주 일정 알려줘")
    resume = ResumeEvent(turn_id="m6")
    status, owner = await inbox.push("ch-1", resume)
    assert status == "queued" and owner is not None  # the first push makes an owner to queue
    assert await inbox.push("ch-1", message, dedup_id="7") == ("queued", None)

    head = await inbox.head("ch-1")
    assert head is not None and EVENT.validate_json(head) == resume
    await inbox.pop("ch-1", head, resume.eid)
    head = await inbox.head("ch-1")
    assert head is not None and EVENT.validate_json(head) == message


async def test_a_message_id_is_accepted_once_and_an_undone_push_can_be_retried(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    event = MessageEvent(message_id="9", user_id="jeff", text="hi")
    status, owner = await inbox.push("ch-1", event, dedup_id="9")
    assert status == "queued"
    assert (await inbox.push("ch-1", MessageEvent(message_id="9", user_id="jeff", text="hi"), dedup_id="9"))[
        0
    ] == "duplicate"

    await inbox.undo_push("ch-1", event, owner, dedup_id="9")  # the job could not be queued
    assert await inbox.head("ch-1") is None
    assert not await inbox.seen("ch-1", "9")
    assert (await inbox.push("ch-1", event, dedup_id="9"))[0] == "queued"  # Sendbird's re-send gets in
