"""Every row of the tool-message status table (docs/http.md, "Tool-message statuses"), through HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import jwt
import pytest

from tests.support import JWT_SECRET, ON_STANDALONE_AND_CLUSTER, Harness, calendar_model
from truloop_assistant.auth import issue_token
from truloop_assistant.store import keys
from truloop_assistant.store.history import History
from truloop_assistant.store.records import CallView
from truloop_assistant.store.turns import TurnStore

pytestmark = ON_STANDALONE_AND_CLUSTER

GOOD = {"events": []}


@pytest.fixture
async def pending(start_server: Any) -> AsyncIterator[tuple[Harness, str]]:
    """A server with one calendar call pending for user jeff."""
    async with start_server(model=calendar_model()) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        yield h, rpc["id"]


def assert_error(r: Any, status: int, code: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code


async def test_accepted_then_duplicate_then_conflict(pending: tuple[Harness, str]) -> None:
    h, call_id = pending
    r = await h.answer(call_id, result=GOOD)
    assert r.status_code == 202 and r.json() == {"status": "resuming"}
    await h.replies(1)

    r = await h.answer(call_id, result=GOOD)  # the device retries
    assert r.status_code == 200 and r.json() == {"status": "duplicate"}
    r = await h.answer(call_id, result={"events": [], "other": 1})
    assert_error(r, 409, "already_answered")
    r = await h.answer(call_id, error={"code": -32002, "message": "UserCanceled"})
    assert_error(r, 409)
    assert len(await h.replies(1)) == 1  # nothing ran twice


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'"a string"',
        b'{"jsonrpc": "1.0", "id": "x", "result": {}}',
        b'{"jsonrpc": "2.0", "result": {}}',
        b'{"jsonrpc": "2.0", "id": "x"}',
        b'{"jsonrpc": "2.0", "id": "x", "result": {}, "error": {"code": 1, "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": "x", "error": {"code": "big", "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": null, "result": {}}',
        b"\xff\xfe",
    ],
)
async def test_malformed_bodies_are_400(pending: tuple[Harness, str], body: bytes) -> None:
    h, _ = pending
    r = await h.post_tool_message(body, token=issue_token(JWT_SECRET, "jeff"))
    assert_error(r, 400)


async def test_auth_failures_are_401(pending: tuple[Harness, str]) -> None:
    h, call_id = pending
    body = json.dumps({"jsonrpc": "2.0", "id": call_id, "result": GOOD}).encode()
    assert_error(await h.post_tool_message(body, token=None), 401)
    assert_error(await h.post_tool_message(body, token="not-a-jwt"), 401, "invalid_token")
    expired = jwt.encode({"sub": "jeff", "exp": int(time.time()) - 300}, JWT_SECRET, algorithm="HS256")
    assert_error(await h.post_tool_message(body, token=expired), 401, "token_expired")
    wrong_key = jwt.encode({"sub": "jeff", "exp": int(time.time()) + 60}, "x" * 40, algorithm="HS256")
    assert_error(await h.post_tool_message(body, token=wrong_key), 401)
    no_exp = jwt.encode({"sub": "jeff"}, JWT_SECRET, algorithm="HS256")
    assert_error(await h.post_tool_message(body, token=no_exp), 401)
    unsigned = jwt.encode({"sub": "jeff", "exp": int(time.time()) + 60}, None, algorithm="none")
    assert_error(await h.post_tool_message(body, token=unsigned), 401)
    r = await h.http.post("/api/v1/agent/tool-message", content=body, headers={"authorization": "Basic abc"})
    assert_error(r, 401)
    # Auth is checked before parsing: garbage without a token is still 401.
    assert_error(await h.post_tool_message(b"garbage", token=None), 401)
    # None of that touched the call.
    assert (await h.answer(call_id, result=GOOD)).status_code == 202


async def test_unknown_call_is_404(pending: tuple[Harness, str]) -> None:
    h, _ = pending
    assert_error(await h.answer("call_" + "0" * 32, result=GOOD), 404, "unknown_call")
    assert_error(await h.answer("pyd_ai_tool_call_id", result=GOOD), 404)


async def test_another_users_token_is_403_and_the_call_stays_pending(pending: tuple[Harness, str]) -> None:
    h, call_id = pending
    assert_error(await h.answer(call_id, result=GOOD, user="mallory"), 403, "not_your_call")
    admin = issue_token(JWT_SECRET, "boss", role="admin")
    assert_error(await h.answer(call_id, result=GOOD, token=admin), 403)
    r = await h.answer(call_id, result=GOOD)
    assert r.status_code == 202
    await h.replies(1)
    # Even once answered, another user learns nothing but 403.
    assert_error(await h.answer(call_id, result=GOOD, user="mallory"), 403)


async def test_result_that_does_not_fit_the_method_is_422_and_the_call_stays_pending(
    pending: tuple[Harness, str],
) -> None:
    h, call_id = pending
    for bad in ({}, {"events": "none"}, {"events": [{"id": "e1"}]}, [], "x", None):
        assert_error(await h.answer(call_id, result=bad), 422, "invalid_result")
    # Extra keys are fine; the call was never consumed by the bad answers.
    r = await h.answer(call_id, result={"events": [], "source": "ios"})
    assert r.status_code == 202 and r.json() == {"status": "resuming"}


async def test_body_over_256_kib_is_413(pending: tuple[Harness, str]) -> None:
    h, call_id = pending
    big = json.dumps(
        {"jsonrpc": "2.0", "id": call_id, "result": {"events": [], "pad": "x" * 300_000}}
    ).encode()
    assert_error(
        await h.post_tool_message(big, token=issue_token(JWT_SECRET, "jeff")), 413, "payload_too_large"
    )
    # Size is checked first, even without a token.
    assert_error(await h.post_tool_message(big, token=None), 413)
    assert (await h.answer(call_id, result=GOOD)).status_code == 202


async def deadline_passes(store: TurnStore, call: CallView) -> None:
    await store.redis.hset(keys.pending(call.tag, call.call_id), "expires_at", time.time() - 0.001)


async def expiry_scanner_settles_it(store: TurnStore, call: CallView) -> None:
    snapshot = await store.load_turn(call.channel_url, call.turn_id)
    assert snapshot is not None and await store.expire(snapshot.turn)


async def user_writes_again(store: TurnStore, call: CallView) -> None:
    snapshot = await store.load_turn(call.channel_url, call.turn_id)
    assert snapshot is not None and await store.supersede(snapshot.turn)


@pytest.mark.parametrize(
    ("meanwhile", "code"),
    [
        (deadline_passes, "call_expired"),
        (expiry_scanner_settles_it, "call_expired"),
        (user_writes_again, "call_superseded"),
    ],
)
async def test_a_call_that_stops_being_pending_while_it_is_answered_is_410_expired_or_superseded(
    pending: tuple[Harness, str],
    monkeypatch: pytest.MonkeyPatch,
    meanwhile: Callable[[TurnStore, CallView], Awaitable[None]],
    code: str,
) -> None:
    h, call_id = pending
    record_answer = TurnStore.record_answer

    async def just_too_late(self: TurnStore, call: CallView, *args: Any) -> Any:
        await meanwhile(self, call)  # between reading the call (still pending) and recording the answer
        return await record_answer(self, call, *args)

    monkeypatch.setattr(TurnStore, "record_answer", just_too_late)
    assert_error(await h.answer(call_id, result=GOOD), 410, code)
    monkeypatch.undo()
    assert_error(await h.answer(call_id, result=GOOD), 410, code)  # and so it stays


NOT_FOUND = {"code": -32601, "message": "Method not found", "data": {"method": "calendar.getEvents"}}


async def jeff_answers(h: Harness, store: TurnStore, call: CallView) -> None:
    assert (await h.answer(call.call_id, result=GOOD)).status_code == 202
    await h.replies(1)


async def no_device_can_and_none_other_answers(h: Harness, store: TurnStore, call: CallView) -> None:
    assert (await h.answer(call.call_id, error=NOT_FOUND)).status_code == 202
    outcome, _ = await store.end_unhandled(call.tag, call.call_id)  # as the scanner does after the wait
    assert outcome == "resume"


def settled_by(meanwhile: Callable[[TurnStore, CallView], Awaitable[None]]) -> Any:
    async def settle(h: Harness, store: TurnStore, call: CallView) -> None:
        await meanwhile(store, call)

    settle.__name__ = meanwhile.__name__
    return settle


@pytest.mark.parametrize(
    ("settle", "status", "code"),
    [
        (jeff_answers, 200, None),
        (settled_by(deadline_passes), 410, "call_expired"),
        (settled_by(expiry_scanner_settles_it), 410, "call_expired"),
        (settled_by(user_writes_again), 410, "call_superseded"),
        (no_device_can_and_none_other_answers, 410, "call_cancelled"),
    ],
    ids=["answered", "past-its-deadline", "expired", "superseded", "cancelled"],
)
async def test_another_users_answer_is_403_whatever_became_of_the_call(
    pending: tuple[Harness, str],
    settle: Callable[[Harness, TurnStore, CallView], Awaitable[None]],
    status: int,
    code: str | None,
) -> None:
    h, call_id = pending
    store = TurnStore(h.redis, pending_ttl_s=60, history=History(h.redis, max_messages=10))
    call = await store.get_call(call_id)
    assert call is not None
    await settle(h, store, call)

    # Another user learns nothing of what became of it: the same answer as while it was pending.
    for answer in ({"result": GOOD}, {"error": NOT_FOUND}):
        assert_error(await h.answer(call_id, user="mallory", **answer), 403, "not_your_call")
    admin = issue_token(JWT_SECRET, "boss", role="admin")
    assert_error(await h.answer(call_id, result=GOOD, token=admin), 403, "not_your_call")
    # Its own user is told as before.
    mine = await h.answer(call_id, result=GOOD)
    if status == 200:
        assert mine.status_code == 200 and mine.json() == {"status": "duplicate"}
    else:
        assert_error(mine, status, code)
