"""Confirmations as people decide: approve, edit before approving, refuse with a reason, always allow."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from tests.api.test_ledger import ADMIN, ledger
from tests.api.test_tools_gate import LUNCH, events_of, relaying, scripted
from tests.support import JWT_SECRET, Harness, signed_in_again
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.events import RedisEventStore

JEFF = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}


async def approvals(h: Harness, headers: dict[str, str] = JEFF) -> Any:
    r = await h.http.get("/api/v1/agent/approvals", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["approvals"]


async def approval_call(h: Harness, turn: int = 0) -> dict[str, Any]:
    r = await ledger(h, token=ADMIN)
    turns = r.json()["turns"]
    return next(c for c in turns[turn]["calls"] if c["kind"] == "approval")


async def test_the_dialog_offers_the_event_fields_to_edit_with_their_current_values(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        editable = {f["name"]: f for f in rpc["params"]["editable"]}
        assert list(editable) == ["title", "start_time", "end_time", "location"]
        assert editable["title"] == {
            "name": "title",
            "label": "Title",
            "type": "text",
            "value": "Design lunch",
        }
        assert editable["start_time"]["type"] == "datetime"
        # In the person's own zone (jeff is in Seoul).
        assert editable["start_time"]["value"] == "2026-12-02T12:00:00+09:00"
        assert editable["location"]["value"] == "Cafe 5F"


async def test_an_edited_start_creates_the_event_at_that_time_and_the_model_and_ledger_know(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        edited = {"confirmed": True, "edited": {"start_time": "2026-12-02T12:30:00+09:00"}}
        assert (await h.answer(rpc["id"], result=edited)).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event success")
        assert "edited_by_user" in reply.text and "2026-12-02T12:30:00+09:00" in reply.text
        [event] = await events_of(h.redis, "jeff")
        assert event.start_time == datetime.fromisoformat("2026-12-02T12:30:00+09:00")
        assert event.end_time == datetime.fromisoformat(LUNCH["end_time"])

        r = await ledger(h, token=ADMIN)
        calls = r.json()["turns"][0]["calls"]
        approval = next(c for c in calls if c["kind"] == "approval")
        assert approval["decision"] == "edited"
        assert approval["result"]["edited"] == {"start_time": "2026-12-02T12:30:00+09:00"}
        ran = next(c for c in calls if c["kind"] == "server" and c["tool"] == "create_event")
        assert ran["args"]["start_time"] == "2026-12-02T12:30:00+09:00"


async def test_an_edit_that_ends_before_it_starts_is_422_and_the_call_still_waits(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        late = {"confirmed": True, "edited": {"start_time": "2026-12-02T14:00:00+09:00"}}
        r = await h.answer(rpc["id"], result=late)
        assert r.status_code == 422 and "end_time" in r.json()["error"]["message"]
        for bad in (
            {"confirmed": True, "edited": {"description": "x"}},  # not editable
            {"confirmed": True, "edited": {"start_time": "tomorrow"}},
            {"confirmed": False, "reason": "x" * 501},
        ):
            assert (await h.answer(rpc["id"], result=bad)).status_code == 422, bad
        assert await events_of(h.redis, "jeff") == []
        assert (await h.answer(rpc["id"], result={"confirmed": True})).json() == {"status": "resuming"}
        await h.replies(1)
        [event] = await events_of(h.redis, "jeff")
        assert event.start_time == datetime.fromisoformat(LUNCH["start_time"])


async def test_a_refusal_with_a_reason_reaches_the_model_and_nothing_is_created(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        refusal = {"confirmed": False, "reason": "Mina is away that week", "remember": "always"}
        assert (await h.answer(rpc["id"], result=refusal)).status_code == 202
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event denied") and "Mina is away that week" in reply.text
        assert await events_of(h.redis, "jeff") == []
        assert await approvals(h) == []  # "always" means nothing on a refusal
        approval = await approval_call(h)
        assert approval["decision"] == "refused" and approval["result"]["reason"] == "Mina is away that week"


async def test_always_skips_the_dialog_until_the_standing_approval_is_ended(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        assert (
            await h.answer(rpc["id"], result={"confirmed": True, "remember": "always"})
        ).status_code == 202
        await h.replies(1)
        [standing] = await approvals(h)
        assert standing["tool"] == "create_event" and standing["since"].endswith("Z")
        # Another person's token sees only their own.
        assert await approvals(h, {"authorization": f"Bearer {issue_token(JWT_SECRET, 'mina')}"}) == []

        await h.user_says("another one")  # no dialog: it runs at once
        replies = await h.replies(2)
        assert replies[1].text.startswith("create_event success")
        assert len(await h.rpc_requests(1)) == 1
        assert len(await events_of(h.redis, "jeff")) == 2
        newest = (await ledger(h, token=ADMIN)).json()["turns"][0]["calls"]
        assert [(c["kind"], c["tool"], c["decision"]) for c in newest] == [
            ("server", "create_event", "standing")
        ]

        r = await h.http.delete("/api/v1/agent/approvals/create_event", headers=JEFF)
        assert r.status_code == 204
        assert (await h.http.delete("/api/v1/agent/approvals/create_event", headers=JEFF)).status_code == 204
        assert await approvals(h) == []
        await h.user_says("and a third")
        rpcs = await h.rpc_requests(2)
        assert rpcs[1]["method"] == "interaction.confirm"


async def test_an_update_shows_the_event_as_it_will_be_and_always_is_never_kept_for_a_cancellation(
    start_server: Any, directory: Any, redis: Any
) -> None:
    event = await RedisEventStore(redis).create(
        "jeff",
        title="Design lunch",
        start_time=datetime.fromisoformat(LUNCH["start_time"]),
        end_time=datetime.fromisoformat(LUNCH["end_time"]),
    )
    moved = {"event_id": event.event_id, "start_time": "2026-12-02T14:00:00+09:00"}
    cancel = {"event_id": event.event_id, "reason": "sick"}
    async with start_server(model=scripted(("update_event", moved), ("cancel_event", cancel))) as h:
        await h.user_says("move it, no, cancel it")
        rpcs = await h.rpc_requests(2)
        update = next(r for r in rpcs if "editable" in r["params"])
        values = {f["name"]: f["value"] for f in update["params"]["editable"]}
        # The title it keeps, the new start, and the end that moves with it (the event keeps its length).
        assert values == {
            "title": "Design lunch",
            "start_time": "2026-12-02T14:00:00+09:00",
            "end_time": "2026-12-02T15:00:00+09:00",
            "location": "",
        }
        [cancelling] = [r for r in rpcs if r is not update]
        assert "editable" not in cancelling["params"]
        always = {"confirmed": True, "remember": "always"}
        assert (await h.answer(cancelling["id"], result=always)).status_code == 202
        assert (await h.answer(update["id"], result={"confirmed": False})).status_code == 202
        await h.replies(1)
        assert await approvals(h) == []


async def test_approvals_need_a_token_and_erasure_ends_them(start_server: Any, directory: Any) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        assert (await h.http.get("/api/v1/agent/approvals")).status_code == 401
        assert (await h.http.delete("/api/v1/agent/approvals/create_event")).status_code == 401
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"confirmed": True, "remember": "always"})
        await h.replies(1)
        assert len(await approvals(h)) == 1
        erasing = time.time()
        assert (await h.http.delete("/api/v1/agent/me", headers=JEFF)).status_code == 204
        again = await signed_in_again("jeff", since=erasing)
        assert await approvals(h, {"authorization": f"Bearer {again}"}) == []


async def test_a_relayed_message_goes_without_a_dialog_once_always_allowed(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=relaying(lambda: "Mina, lunch is at 1pm now.")) as h:
        await h.user_says("tell mina lunch moved to 1pm")
        [rpc] = await h.rpc_requests(1)
        assert "editable" not in rpc["params"]  # nothing of a relayed message is edited in the dialog
        await h.answer(rpc["id"], result={"confirmed": True, "remember": "always"})
        await h.replies(1)
        assert [a["tool"] for a in await approvals(h)] == ["send_message_to_user"]

        await h.user_says("tell mina again")
        replies = await h.replies(2)
        assert replies[1].text.startswith("send_message_to_user success")
        assert len(await h.rpc_requests(1)) == 1  # no second dialog
        [direct] = h.sendbird.channels.values()
        sent = [m.text for m in h.sendbird.messages if m.channel_url == direct["channel_url"]]
        assert sent == ["Mina, lunch is at 1pm now."] * 2


async def test_the_first_device_s_decision_wins(start_server: Any, directory: Any) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        edited = {"confirmed": True, "edited": {"title": "Design lunch (5F)"}}
        assert (await h.answer(rpc["id"], result=edited)).json() == {"status": "resuming"}
        # The tablet's answer comes too late: the phone's stands.
        tablet = await h.answer(rpc["id"], result={"confirmed": False, "reason": "no"})
        assert tablet.status_code == 409
        await h.replies(1)
        [event] = await events_of(h.redis, "jeff")
        assert event.title == "Design lunch (5F)"
