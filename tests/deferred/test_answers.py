"""Recording a device's answer, on a real Redis: every outcome, and what each sets going."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from tests.factories import paused_turn
from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.deferred.device_answers import (
    Accepted,
    DeviceAnswer,
    DeviceAnswers,
    Duplicate,
    Refused,
    Resuming,
)
from truloop_assistant.deferred.resumes import resume_if_due
from truloop_assistant.protocol.jsonrpc import parse_response
from truloop_assistant.store import keys
from truloop_assistant.store.history import History
from truloop_assistant.store.turns import TurnStore

pytestmark = ON_STANDALONE_AND_CLUSTER

EVENTS: dict[str, Any] = {"events": []}
NOT_FOUND = {"code": -32601, "message": "Method not found"}


class FollowUps:
    """Notes the resumes and deliveries an answer sets going."""

    def __init__(self) -> None:
        self.resumed: list[tuple[str, str]] = []
        self.delivered: list[str] = []

    async def resume(self, channel_url: str, turn_id: str) -> None:
        self.resumed.append((channel_url, turn_id))

    async def deliver(self, channel_url: str) -> None:
        self.delivered.append(channel_url)


def answer(call_id: str, *, result: Any = None, error: dict[str, Any] | None = None) -> DeviceAnswer:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": call_id}
    body.update({"error": error} if error is not None else {"result": result})
    return parse_response(json.dumps(body).encode())


@pytest.fixture
def store(redis: Redis) -> TurnStore:
    return TurnStore(redis, pending_ttl_s=60, history=History(redis, max_messages=10))


@pytest.fixture
def follow_ups() -> FollowUps:
    return FollowUps()


@pytest.fixture
def answers(store: TurnStore, follow_ups: FollowUps) -> DeviceAnswers:
    return DeviceAnswers(store, follow_ups, unhandled_wait_s=30)


async def test_answers_are_accepted_then_the_last_resumes_the_turn(
    store: TurnStore, answers: DeviceAnswers, follow_ups: FollowUps
) -> None:
    await store.save_paused(paused_turn(2))

    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Accepted(remaining=1)
    assert follow_ups.delivered == ["ch-1"] and follow_ups.resumed == []  # its request's update
    assert await answers.record("jeff", answer("call_1", result=EVENTS)) == Resuming()
    assert follow_ups.resumed == [("ch-1", "m1")]


async def test_the_same_answer_again_is_a_duplicate_and_queues_a_resume_that_may_have_been_lost(
    store: TurnStore, answers: DeviceAnswers, follow_ups: FollowUps
) -> None:
    await store.save_paused(paused_turn(1))
    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Resuming()

    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Duplicate()
    assert follow_ups.resumed == [("ch-1", "m1")] * 2  # queued twice, the turn runs once


async def test_a_duplicate_of_a_turn_no_longer_resuming_queues_nothing(
    store: TurnStore, answers: DeviceAnswers, follow_ups: FollowUps
) -> None:
    await store.save_paused(paused_turn(2))
    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Accepted(remaining=1)

    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Duplicate()
    assert follow_ups.resumed == []  # the turn still waits for call_1


async def test_a_different_answer_to_an_answered_call_is_refused(
    store: TurnStore, answers: DeviceAnswers
) -> None:
    await store.save_paused(paused_turn(2))
    await answers.record("jeff", answer("call_0", result=EVENTS))

    outcome = await answers.record(
        "jeff", answer("call_0", error={"code": -32002, "message": "UserCanceled"})
    )
    assert isinstance(outcome, Refused) and outcome.reason == "already_answered"


async def test_unknown_calls_and_other_users_calls_are_refused(
    store: TurnStore, answers: DeviceAnswers
) -> None:
    await store.save_paused(paused_turn(2))

    unknown = await answers.record("jeff", answer("call_9", result=EVENTS))
    assert isinstance(unknown, Refused) and unknown.reason == "unknown_call"
    theirs = await answers.record("mina", answer("call_0", result=EVENTS))
    assert isinstance(theirs, Refused) and theirs.reason == "not_your_call"
    call = await store.get_call("call_0")
    assert call is not None and call.state == "pending"  # it stays pending for its owner


async def test_a_result_that_does_not_fit_is_refused_and_the_call_stays_pending(
    store: TurnStore, answers: DeviceAnswers, follow_ups: FollowUps
) -> None:
    await store.save_paused(paused_turn(2))

    outcome = await answers.record("jeff", answer("call_0", result={"events": "none"}))
    assert isinstance(outcome, Refused) and outcome.reason == "invalid_result"
    assert "calendar.getEvents" in outcome.message
    call = await store.get_call("call_0")
    assert call is not None and call.state == "pending"
    assert follow_ups.delivered == follow_ups.resumed == []


async def test_expired_and_superseded_calls_are_refused(
    store: TurnStore, answers: DeviceAnswers, redis: Redis
) -> None:
    turn = paused_turn(2)
    await store.save_paused(turn)
    await redis.hset(keys.pending(keys.conversation_tag("ch-1"), "call_0"), "expires_at", time.time() - 1)

    expired = await answers.record("jeff", answer("call_0", result=EVENTS))
    assert isinstance(expired, Refused) and expired.reason == "call_expired"
    assert await store.supersede(turn)
    superseded = await answers.record("jeff", answer("call_1", result=EVENTS))
    assert isinstance(superseded, Refused) and superseded.reason == "call_superseded"


async def test_a_device_that_cannot_run_the_method_leaves_the_call_to_another_device(
    store: TurnStore, answers: DeviceAnswers, follow_ups: FollowUps
) -> None:
    await store.save_paused(paused_turn(2))

    assert await answers.record("jeff", answer("call_0", error=NOT_FOUND)) == Accepted(remaining=2)
    assert await answers.record("jeff", answer("call_0", error=NOT_FOUND)) == Duplicate()
    assert follow_ups.delivered == []  # nothing settled: the request stays open on every device
    # Another device can: its answer settles the call.
    assert await answers.record("jeff", answer("call_0", result=EVENTS)) == Accepted(remaining=1)
    assert follow_ups.delivered == ["ch-1"]


async def test_a_call_no_device_could_run_is_cancelled_for_other_answers(
    store: TurnStore, answers: DeviceAnswers
) -> None:
    await store.save_paused(paused_turn(2))
    await answers.record("jeff", answer("call_0", error=NOT_FOUND))
    [(tag, call_id)] = await store.unhandled_due(time.time() + 60)
    assert (await store.end_unhandled(tag, call_id))[0] == "accepted"

    assert await answers.record("jeff", answer("call_0", error=NOT_FOUND)) == Duplicate()
    late = await answers.record("jeff", answer("call_0", result=EVENTS))
    assert isinstance(late, Refused) and late.reason == "call_cancelled"


async def test_only_a_turn_in_state_resuming_gets_a_resume(store: TurnStore, follow_ups: FollowUps) -> None:
    assert not await resume_if_due(store, follow_ups, "ch-1", "m1")  # no such turn
    turn = paused_turn(1)
    await store.save_paused(turn)
    assert not await resume_if_due(store, follow_ups, "ch-1", "m1")  # it waits for its call
    assert await store.expire(turn)
    assert await resume_if_due(store, follow_ups, "ch-1", "m1")
    assert follow_ups.resumed == [("ch-1", "m1")]
