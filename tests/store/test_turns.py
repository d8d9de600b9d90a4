"""Paused turns in Redis: calls the device can answer once, and typed answers."""

from __future__ import annotations

import time

import pytest
from redis.asyncio import Redis

from tests.factories import paused_turn
from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.protocol.jsonrpc import JsonRpcError
from truloop_assistant.store import keys
from truloop_assistant.store.answers import DeviceError, DeviceResult, ServerFailure
from truloop_assistant.store.history import History
from truloop_assistant.store.turns import TurnStore

pytestmark = ON_STANDALONE_AND_CLUSTER


@pytest.fixture
def store(redis: Redis) -> TurnStore:
    return TurnStore(redis, pending_ttl_s=60, history=History(redis, max_messages=10))


async def test_each_answer_is_kept_as_what_the_device_said(store: TurnStore) -> None:
    turn = paused_turn(3, local={"call_2": ServerFailure(failed="over the limit")})
    await store.save_paused(turn)

    error = JsonRpcError(
        code=-32010, message="PermissionRequired", data={"requiredPermission": "calendar.read"}
    )
    first = await store.get_call("call_0")
    assert first is not None and (first.state, first.user_id, first.bucket) == ("pending", "jeff", "call")
    assert await store.record_answer(first, "fp0", DeviceError(error=error)) == ("accepted", 1)
    second = await store.get_call("call_1")
    assert second is not None
    assert await store.record_answer(second, "fp1", DeviceResult(result={"events": []})) == ("resume", 0)

    snapshot = await store.load_turn("ch-1", "m1")
    assert snapshot is not None and snapshot.state == "resuming"
    assert snapshot.answers == {
        "call_0": DeviceError(error=error),
        "call_1": DeviceResult(result={"events": []}),
        "call_2": ServerFailure(failed="over the limit"),
    }
    # The call the server failed itself was never sent: the device cannot answer it.
    assert await store.get_call("call_2") is None


async def test_an_answered_call_remembers_its_answer_for_duplicates_and_conflicts(store: TurnStore) -> None:
    await store.save_paused(paused_turn(3))
    call = await store.get_call("call_0")
    assert call is not None
    await store.record_answer(call, "same", DeviceResult(result={"events": []}))

    again = await store.get_call("call_0")
    assert again is not None and (again.state, again.fingerprint) == ("answered", "same")
    assert (await store.record_answer(call, "same", DeviceResult(result={"events": []})))[0] == "duplicate"
    assert (await store.record_answer(call, "other", DeviceResult(result={"events": [1]})))[0] == "conflict"


async def test_a_call_past_its_deadline_is_expired_before_the_scanner_settles_it(
    store: TurnStore, redis: Redis
) -> None:
    await store.save_paused(paused_turn(3))
    tag = keys.conversation_tag("ch-1")
    await redis.hset(keys.pending(tag, "call_0"), "expires_at", time.time() - 1)
    call = await store.get_call("call_0")
    assert call is not None and call.state == "expired"
    assert (await store.record_answer(call, "fp", DeviceResult(result={"events": []})))[0] == "gone"
