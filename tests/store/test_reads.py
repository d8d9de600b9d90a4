"""Reads batched from several stores give what each gives alone, on one Redis and across a Cluster's
slots (a conversation's keys, a person's keys and app-wide keys are on different nodes there)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.protocol.declarations import Declaration
from truloop_assistant.store import keys
from truloop_assistant.store.device_declarations import ClientTools
from truloop_assistant.store.history import History
from truloop_assistant.store.reads import Batch
from truloop_assistant.store.transcript import Line, Transcript
from truloop_assistant.store.turns import TurnStore

pytestmark = ON_STANDALONE_AND_CLUSTER

DECLARED = {
    "tools": [
        {
            "name": "scan_receipt",
            "description": "Scan a receipt with the camera",
            "method": "camera.scanReceipt",
            "parameters": {"type": "object", "properties": {}},
        }
    ]
}


async def test_a_batch_reads_what_each_store_reads_alone(redis: Any) -> None:
    history = History(redis, max_messages=40)
    store = TurnStore(redis, pending_ttl_s=60, history=history)
    transcript = Transcript(redis)
    tools = ClientTools(redis)
    said = [ModelRequest(parts=[UserPromptPart("hello")]), ModelResponse(parts=[TextPart("hi!")])]
    await store.finish("ch-1", "jeff", said, turn_id="m1", paused=False, answer="hi!")
    await transcript.add("ch-1", Line(user_id="mina", text="lunch?"))
    await tools.put("jeff", Declaration.model_validate(DECLARED))
    await store.record_client_outcomes("jeff", {"get_calendar_events": False})

    batch = Batch(redis)
    lines = batch.add(transcript.recent_read("ch-1"))
    messages = batch.add(history.read("ch-1", "jeff"))
    declared = batch.add(tools.read("jeff"))
    failures = batch.add(store.client_failures_read("jeff"))
    turn = batch.add(store.turn_read("ch-1", "m1"))
    active = batch.add(store.active_read("ch-1", "jeff"))
    nobody = batch.add(history.read("ch-2", "nobody"))
    await batch.run()

    assert [(line.user_id, line.text) for line in lines.value] == [("", "hi!"), ("mina", "lunch?")]
    assert lines.value == await transcript.recent("ch-1")
    assert messages.value == await history.load("ch-1", "jeff") != []
    assert declared.value is not None and [t.name for t in declared.value.tools] == ["scan_receipt"]
    assert declared.value == await tools.get("jeff")
    assert failures.value == {"get_calendar_events": 1} == await store.client_failures("jeff")
    assert turn.value is None and active.value is None  # a turn that never paused
    assert nobody.value == []


async def test_a_slot_has_no_value_before_its_batch_ran(redis: Any) -> None:
    batch = Batch(redis)
    slot = batch.add(History(redis, max_messages=40).read("ch-1", "jeff"))
    with pytest.raises(RuntimeError, match="has not run"):
        _ = slot.value
    await batch.run()
    assert slot.value == []


async def test_the_reads_after_a_batched_write_see_it(redis: Any) -> None:
    """A resume counts its devices' failures and reads the count its step acts on in one round trip."""
    store = TurnStore(redis, pending_ttl_s=60, history=History(redis, max_messages=40))
    await store.record_client_outcomes("jeff", {"get_calendar_events": False, "request_permission": False})

    batch = Batch(redis)
    store.count_client_outcomes(batch, "jeff", {"get_calendar_events": False, "request_permission": True})
    failures = batch.add(store.client_failures_read("jeff"))
    await batch.run()

    assert failures.value == {"get_calendar_events": 2}  # one more failure; the other one's run reset
    assert 0 < await redis.ttl(keys.client_failures("jeff")) <= keys.CLIENT_FAILURES_TTL_S
