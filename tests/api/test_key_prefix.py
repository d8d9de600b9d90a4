"""Two deployments share one Redis (or one Supermemory account) under different key prefixes and never
see each other's state."""

from __future__ import annotations

from typing import Any

from tests.fakes.supermemory import SUPERMEMORY_KEY, FakeSupermemory
from tests.support import calendar_model, served
from tests.tools.support import calls
from truloop_assistant.store import keys


async def test_two_deployments_on_one_redis_keep_apart(start_server: Any) -> None:
    async with start_server(model=calendar_model(), key_prefix="blue") as blue:
        await blue.user_says("what's on this week?", channel="shared")
        [request] = await blue.rpc_requests(1, channel="shared")
        await blue.idle()
        written = [key.decode() async for key in blue.redis.scan_iter(count=1000)]
        assert written and all(key.startswith("blue:") for key in written), written

    try:
        async with start_server(model=calendar_model(), key_prefix="green") as green:
            # The other deployment's pending call is unknown here, and the same channel starts afresh.
            r = await green.answer(request["id"], result={"events": []})
            assert r.status_code == 404, r.text
            await green.user_says("what's on this week?", channel="shared", message_id=2000)
            request_green = (await green.rpc_requests(2, channel="shared"))[1]
            assert request_green["id"] != request["id"]
            assert (await green.answer(request_green["id"], result={"events": []})).status_code == 202
            await green.replies(1, channel="shared")
    finally:
        keys.use_prefix("ta")

    # Blue's call still waits for its phone under blue's keys.
    async with start_server(model=calendar_model(), key_prefix="blue") as blue:
        r = await blue.answer(request["id"], result={"events": []})
        assert r.status_code == 202, r.text
        replies = await blue.replies(2, channel="shared")
        assert replies[-1].text == "nothing this week"
    keys.use_prefix("ta")


async def test_two_deployments_sharing_a_supermemory_account_never_read_each_others_memories(
    start_server: Any,
) -> None:
    remember = calls("save_memory", {"text": "my locker code is 1357"})
    recall = calls("search_memories", {"query": "locker code"})
    async with served(FakeSupermemory()) as supermemory:
        account = {"supermemory_api_key": SUPERMEMORY_KEY, "supermemory_api_url": supermemory.url}
        try:
            async with start_server(model=remember, key_prefix="blue", **account) as blue:
                await blue.user_says("remember: my locker code is 1357", channel="blue-1")
                [saved] = await blue.replies(1, channel="blue-1")
                assert saved.text.startswith("success:"), saved.text

            # Jeff of the other deployment, on the same account, is someone else.
            async with start_server(model=recall, key_prefix="green", **account) as green:
                await green.user_says("what is my locker code?", channel="green-1", message_id=3000)
                [answer] = await green.replies(1, channel="green-1")
                assert answer.text == 'success: {"memories":[]}', answer.text

            async with start_server(model=recall, key_prefix="blue", **account) as blue:
                await blue.user_says("what is my locker code?", channel="blue-2", message_id=2000)
                [answer] = await blue.replies(1, channel="blue-2")
                assert "1357" in answer.text, answer.text
        finally:
            keys.use_prefix("ta")
        [document] = supermemory.documents.values()
    [tag] = document["containerTags"]
    assert tag.startswith("blue_u_") and "jeff" not in tag
