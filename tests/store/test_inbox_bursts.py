"""Several messages in a row, as the inbox hands them out: a person's messages waiting right behind
their first are handed out with it, in one script (on one Redis and on a Redis Cluster), within 20
messages and 8,000 characters; someone else's message, a resume or an undecided message ends them."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.store import keys
from truloop_assistant.store.inbox import EVENT, Consumed, Inbox, MessageEvent, Next, ResumeEvent

pytestmark = ON_STANDALONE_AND_CLUSTER

URL = "ch-bursts"


def said(user: str, text: str, *, undecided: bool = False) -> MessageEvent:
    return MessageEvent(message_id=f"{user}-{text[:12]}", user_id=user, text=text, undecided=undecided)


async def pushed(inbox: Inbox, *events: MessageEvent | ResumeEvent) -> str:
    """Push the events; the owner the first push made."""
    owners = [(await inbox.push(URL, event))[1] for event in events]
    assert owners[0] is not None and not any(owners[1:])
    return owners[0]


def texts(handed: Next) -> list[str]:
    """The texts of the messages handed out together, in order."""
    events = [EVENT.validate_json(raw) for raw in (handed.raw, *(raw for raw, _ in handed.more))]
    return [e.text for e in events if isinstance(e, MessageEvent)]


async def test_a_persons_messages_in_a_row_are_handed_out_together_and_someone_elses_keep_their_place(
    redis: Redis,
) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    owner = await pushed(
        inbox,
        said("jeff", "meet tomorrow at 3"),
        said("jeff", "actually 4"),
        said("jeff", "call it design review"),
        said("mina", "can I join?"),
        said("jeff", "and book a room"),
    )
    claim = await inbox.claim(URL, owner)
    assert claim is not None and claim.first is not None
    first = claim.first
    assert texts(first) == ["meet tomorrow at 3", "actually 4", "call it design review"]
    attempts = await redis.hgetall(keys.inbox_attempts(keys.conversation_tag(URL)))
    assert sorted(int(n) for n in attempts.values()) == [1, 1, 1]  # each gathered message's start counted

    # The drain's next step takes all three off (its step did not) and hands out mina's message alone.
    nxt = await inbox.next(URL, owner, done=Consumed(first.raw, first.eid, more=first.more))
    assert isinstance(nxt, Next) and texts(nxt) == ["can I join?"]
    nxt = await inbox.next(URL, owner, done=Consumed(nxt.raw, nxt.eid, more=nxt.more))
    assert isinstance(nxt, Next) and texts(nxt) == ["and book a room"]
    assert await inbox.next(URL, owner, done=Consumed(nxt.raw, nxt.eid)) is None  # empty: released
    assert await redis.hgetall(keys.inbox_attempts(keys.conversation_tag(URL))) == {}


async def test_a_resume_or_an_undecided_message_ends_the_run_and_an_undecided_one_runs_alone(
    redis: Redis,
) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    owner = await pushed(
        inbox,
        said("jeff", "one"),
        ResumeEvent(turn_id="m0"),
        said("jeff", "two"),
        said("jeff", "three", undecided=True),
        said("jeff", "four"),
        said("jeff", "five"),
    )
    handed: list[list[str] | str] = []
    nxt = await inbox.next(URL, owner)
    while isinstance(nxt, Next):
        event = EVENT.validate_json(nxt.raw)
        handed.append(texts(nxt) if isinstance(event, MessageEvent) else "resume")
        nxt = await inbox.next(URL, owner, done=Consumed(nxt.raw, nxt.eid, more=nxt.more))
    assert handed == [["one"], "resume", ["two"], ["three"], ["four", "five"]]


async def test_at_most_twenty_messages_go_together_and_the_rest_is_the_next_turn(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    owner = await pushed(inbox, *(said("jeff", f"message {i}") for i in range(1, 26)))
    first = await inbox.next(URL, owner)
    assert isinstance(first, Next) and texts(first) == [f"message {i}" for i in range(1, 21)]
    rest = await inbox.next(URL, owner, done=Consumed(first.raw, first.eid, more=first.more))
    assert isinstance(rest, Next) and texts(rest) == [f"message {i}" for i in range(21, 26)]


async def test_at_most_8000_characters_go_together_counted_as_characters_not_bytes(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    # Korean takes three bytes a character: 8,000 characters are 24,000 bytes, and still fit.
    owner = await pushed(
        inbox, said("jeff", "가" * 4000), said("jeff", "나" * 4000), said("jeff", "다"), said("jeff", "라")
    )
    first = await inbox.next(URL, owner)
    assert isinstance(first, Next) and [len(t) for t in texts(first)] == [4000, 4000]
    rest = await inbox.next(URL, owner, done=Consumed(first.raw, first.eid, more=first.more))
    assert isinstance(rest, Next) and texts(rest) == ["다", "라"]


async def test_a_first_message_over_the_bound_runs_alone(redis: Redis) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    owner = await pushed(inbox, said("jeff", "x" * (keys.BURST_MAX_CHARS + 1)), said("jeff", "short"))
    first = await inbox.next(URL, owner)
    assert isinstance(first, Next) and first.more == ()
    rest = await inbox.next(URL, owner, done=Consumed(first.raw, first.eid))
    assert isinstance(rest, Next) and texts(rest) == ["short"]


async def test_a_retry_hands_out_the_same_first_message_with_at_least_the_messages_it_had(
    redis: Redis,
) -> None:
    inbox = Inbox(redis, owner_ttl_s=5)
    owner = await pushed(inbox, said("jeff", "meet tomorrow at 3"), said("jeff", "actually 4"))
    first = await inbox.next(URL, owner)
    assert isinstance(first, Next) and first.starts == 1

    # The worker died in the step: nothing was taken off. A message came meanwhile; the retry (the
    # job's next attempt, the same owner) hands out the same head, with both messages behind it.
    await inbox.push(URL, said("jeff", "call it design review"))
    again = await inbox.claim(URL, owner)
    assert again is not None and again.first is not None
    assert again.first.raw == first.raw and again.first.starts == 2
    assert texts(again.first) == ["meet tomorrow at 3", "actually 4", "call it design review"]
    assert again.first.more[0] == first.more[0]
    tag = keys.conversation_tag(URL)
    starts = await redis.hgetall(keys.inbox_attempts(tag))
    assert sorted(int(n) for n in starts.values()) == [1, 2, 2]

    # A drain that lost its claim takes the step's events off only while they are the head, in order.
    assert await inbox.pop(URL, first.raw, first.eid, more=again.first.more) == 3
    assert await redis.llen(keys.inbox(tag)) == 0
    assert await inbox.pop(URL, first.raw, first.eid, more=again.first.more) == 0
