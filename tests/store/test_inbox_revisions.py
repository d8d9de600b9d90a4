"""An edit or deletion applied to a conversation's inbox and transcript in one script, on one Redis and
on a Redis Cluster (every key it touches carries the conversation's hash tag)."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.store import keys
from truloop_assistant.store.admissions import recent
from truloop_assistant.store.inbox import EVENT, Inbox, MessageEvent
from truloop_assistant.store.inbox_revisions import InboxRevisions, Revised
from truloop_assistant.store.transcript import Line, Transcript

pytestmark = ON_STANDALONE_AND_CLUSTER


async def _queued(inbox: Inbox, message_id: str, text: str) -> tuple[MessageEvent, str | None]:
    """The event queued, and the owner its push made (the first push's)."""
    event = MessageEvent(message_id=message_id, user_id="jeff", text=text, trace="00-a/b-01")
    said = Line(user_id="jeff", text=text, turn=True, message_id=message_id)
    status, owner = await inbox.push("ch-1", event, dedup_id=message_id, said=said)
    assert status == "queued"
    return event, owner


async def test_a_waiting_message_takes_its_edit_or_leaves_and_a_handed_out_one_is_left_alone(
    redis: Redis,
) -> None:
    inbox, transcript, revisions = Inbox(redis, owner_ttl_s=5), Transcript(redis), InboxRevisions(redis)
    first, owner = await _queued(inbox, "1", "first")
    assert owner is not None
    claim = await inbox.claim("ch-1", owner)  # "first" is handed out: its step runs
    assert claim is not None and claim.first is not None
    # Written while that step runs: they wait (messages waiting together when a step starts would be
    # handed out with it, as one turn).
    await _queued(inbox, "2", "meet at 3")
    await _queued(inbox, "3", "never mind")

    edit = await revisions.revise(
        "ch-1", "2", "jeff", waiting="meet at 4", ran="meet at 4", decision="edited"
    )
    assert edit == Revised(where="waiting", line=True)
    gone = await revisions.revise("ch-1", "3", "jeff", waiting=None, ran=None, decision="deleted")
    assert gone == Revised(where="waiting", line=True)
    running = await revisions.revise("ch-1", "1", "jeff", waiting="firsT", ran="firsT", decision="edited")
    assert running == Revised(where="running", line=True)  # the step keeps its words; the line changes

    tag = keys.conversation_tag("ch-1")
    events = [EVENT.validate_json(raw) for raw in await redis.lrange(keys.inbox(tag), 0, -1)]
    assert [(e.message_id, e.text) for e in events if isinstance(e, MessageEvent)] == [
        ("1", "first"),
        ("2", "meet at 4"),
    ]
    assert events[0] == first  # the handed-out event is the very one its step will take off
    assert events[1].trace == "00-a/b-01" and events[1].eid  # the rest of the event as it was
    assert [(line.message_id, line.text) for line in await transcript.recent("ch-1")] == [
        ("1", "firsT"),
        ("2", "meet at 4"),
    ]
    assert [e["decision"] for e in await recent(redis, "ch-1")][:3] == ["edited", "deleted", "edited"]


async def test_a_deletion_of_a_message_not_seen_yet_keeps_its_late_delivery_out(redis: Redis) -> None:
    inbox, revisions = Inbox(redis, owner_ttl_s=5), InboxRevisions(redis)
    found = await revisions.revise("ch-1", "9", "jeff", waiting=None, ran=None, decision="deleted")
    assert found == Revised(where="ran", line=False)
    assert await recent(redis, "ch-1") == []  # nothing found: nothing noted
    event = MessageEvent(message_id="9", user_id="jeff", text="deleted before it came")
    assert (await inbox.push("ch-1", event, dedup_id="9"))[0] == "duplicate"
    # A re-sent deletion of a message that ran and whose line is gone finds nothing either.
    again = await revisions.revise("ch-1", "9", "jeff", waiting=None, ran=None, decision="deleted")
    assert again == Revised(where="ran", line=False)
