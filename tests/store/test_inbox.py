"""A conversation's inbox: typed events, in arrival order, a message id accepted once."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from truloop_assistant.store import keys
from truloop_assistant.store.inbox import EVENT, Inbox, MessageEvent, ResumeEvent
from truloop_assistant.store.outbox import TextOut
from truloop_assistant.store.transcript import Line, Transcript


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
    inbox, transcript = Inbox(redis, owner_ttl_s=5), Transcript(redis)
    event = MessageEvent(message_id="9", user_id="jeff", text="hi")
    said = Line(user_id="jeff", text="hi", turn=True)
    status, owner = await inbox.push("ch-1", event, dedup_id="9", said=said)
    assert status == "queued"
    assert await transcript.recent("ch-1") == [said]  # the turn's own words, with its event
    again = MessageEvent(message_id="9", user_id="jeff", text="hi")
    assert (await inbox.push("ch-1", again, dedup_id="9", said=said))[0] == "duplicate"
    assert await transcript.recent("ch-1") == [said]  # a re-delivery adds no line

    await inbox.undo_push("ch-1", event, owner, dedup_id="9", said=said)  # the job could not be queued
    assert await inbox.head("ch-1") is None
    assert not await inbox.seen("ch-1", "9")
    assert await transcript.recent("ch-1") == []
    assert (await inbox.push("ch-1", event, dedup_id="9", said=said))[0] == "queued"  # Sendbird's re-send
    assert await transcript.recent("ch-1") == [said]


async def test_a_full_inbox_refuses_a_message_without_keeping_any_of_it(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keys, "INBOX_MAX", 3)
    inbox, transcript = Inbox(redis, owner_ttl_s=5), Transcript(redis)
    events = [MessageEvent(message_id=str(i), user_id="jeff", text=f"message {i}") for i in range(4)]
    lines = [Line(user_id="jeff", text=e.text, turn=True) for e in events]
    statuses = [
        (await inbox.push("ch-1", e, dedup_id=e.message_id, said=s))[0]
        for e, s in zip(events, lines, strict=True)
    ]
    assert statuses == ["queued", "queued", "queued", "full"]
    tag = keys.conversation_tag("ch-1")
    assert [EVENT.validate_json(raw) for raw in await redis.lrange(keys.inbox(tag), 0, -1)] == events[:3]
    assert await transcript.recent("ch-1") == lines[:3]
    assert not await inbox.seen("ch-1", "3")  # Sendbird's re-send is not taken for a duplicate

    head = await inbox.head("ch-1")
    assert head is not None
    await inbox.pop("ch-1", head, events[0].eid)
    assert (await inbox.push("ch-1", events[3], dedup_id="3", said=lines[3]))[0] == "queued"  # the re-send
    assert [EVENT.validate_json(raw) for raw in await redis.lrange(keys.inbox(tag), 0, -1)] == events[1:]


async def test_a_claim_hands_out_the_first_event_unless_the_outbox_goes_first(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    tag = keys.conversation_tag("ch-1")
    event = MessageEvent(message_id="1", user_id="jeff", text="hi")
    _, owner = await inbox.push("ch-1", event, dedup_id="1")
    assert owner is not None
    assert await inbox.claim("ch-1", "drain:someone-else") is None  # the push made its owner

    # An answer still to deliver goes first: the event is not handed out (nor its start counted).
    earlier = TextOut(text="an earlier answer", dedup_id="m0:0:answer")
    await redis.rpush(keys.outbox(tag), earlier.model_dump_json())
    claim = await inbox.claim("ch-1", owner)
    assert claim is not None and claim.outbox.raw is not None and claim.first is None
    assert await redis.hgetall(keys.inbox_attempts(tag)) == {}

    # With the outbox empty, the claim hands out the event with its first start counted.
    await redis.delete(keys.outbox(tag))
    claim = await inbox.claim("ch-1", owner)
    assert claim is not None and claim.first is not None and not claim.idle
    assert EVENT.validate_json(claim.first.raw) == event and claim.first.starts == 1
    assert await redis.get(keys.owner(tag)) == owner.encode()

    # With nothing left, the claim is given up at once.
    await inbox.pop("ch-1", claim.first.raw, claim.first.eid)
    claim = await inbox.claim("ch-1", owner)
    assert claim is not None and claim.idle
    assert await redis.get(keys.owner(tag)) is None
