"""A request's update (its message now says the call was answered) is a courtesy to the devices that
nobody waits for: the resumed turn runs while the channel takes it, and the answer still follows it.
(An update the channel refuses for now holds up no answer either: ``tests/api/test_call_state.py``.)"""

from __future__ import annotations

from typing import Any

from tests.api.test_deferred_turn import approval_agent
from tests.pipeline.test_waiting_drain import until
from tests.support import ON_STANDALONE_AND_CLUSTER, calendar_model
from truloop_assistant.store import keys
from truloop_assistant.store.outbox import OUTGOING, SettleOut, TextOut

pytestmark = ON_STANDALONE_AND_CLUSTER

OUTBOX = keys.outbox(keys.conversation_tag("ch-1"))


async def outbox_kinds(h: Any) -> list[str]:
    return [type(OUTGOING.validate_json(raw)).__name__ for raw in await h.redis.lrange(OUTBOX, 0, -1)]


async def test_the_resumed_turn_runs_while_the_channel_takes_the_requests_update(start_server: Any) -> None:
    async with start_server(model=calendar_model("nothing this week")) as h:
        await h.user_says("calendar")
        [rpc] = await h.rpc_requests(1)
        h.sendbird.update_hang_s = 30.0  # the channel is slow to take the update
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        # The answer is ready, behind the update the channel still holds: the model did not wait for it.
        await until(lambda: _kinds_are(h, [SettleOut.__name__, TextOut.__name__]), within_s=5)
        assert h.sendbird.updates_in("ch-1") == [] and [m for m in h.sendbird.messages if not m.is_rpc] == []
        h.sendbird.release_updates()
        [reply] = await h.replies(1)
        assert reply.text == "nothing this week"
        [update] = h.sendbird.updates_in("ch-1")
        assert update.settled["state"] == "answered"
        assert update.at <= reply.at  # in order all the same
        await h.idle()
        assert await h.redis.llen(OUTBOX) == 0


async def test_a_person_answering_later_gets_the_same(start_server: Any) -> None:
    # Not a waiting drain's: the confirmation's resume is a job of its own, which finds the update first.
    ran: list[dict[str, Any]] = []
    async with start_server(agent=approval_agent(ran)) as h:
        await h.user_says("wipe it")
        [rpc] = await h.rpc_requests(1)
        await h.idle()
        h.sendbird.update_hang_s = 30.0
        assert (await h.answer(rpc["id"], result={"confirmed": True})).status_code == 202
        await until(lambda: _kinds_are(h, [SettleOut.__name__, TextOut.__name__]), within_s=5)
        assert ran == [{"scope": "calendar"}]
        h.sendbird.release_updates()
        [reply] = await h.replies(1)
        assert h.sendbird.updates_in("ch-1")[0].at <= reply.at


async def _kinds_are(h: Any, kinds: list[str]) -> bool:
    return await outbox_kinds(h) == kinds
