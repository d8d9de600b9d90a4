"""``DELETE /api/v1/agent/me``: a person erases what the server keeps of them, and only of them."""

from __future__ import annotations

from typing import Any

from tests.support import JWT_SECRET
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.memory import RedisMemoryStore
from truloop_assistant.store import keys
from truloop_assistant.store.transcript import Transcript


async def test_erasing_me_forgets_my_memories_history_and_pending_calls(start_server: Any) -> None:
    async with start_server() as h:  # the offline model
        await h.user_says("기억해줘: 나는 창가 자리를 좋아해", channel="c-1")
        await h.user_says("remember that I like tea", user="mina", channel="c-3")
        await h.replies(1, channel="c-1")
        await h.replies(1, channel="c-3")
        await h.user_says("이번 주 일정 알려줘", channel="c-2")
        [rpc] = await h.rpc_requests(1, channel="c-2")
        memories = RedisMemoryStore(h.redis)
        assert await memories.list_recent("jeff") and await memories.list_recent("mina")

        unauthenticated = await h.http.delete("/api/v1/agent/me")
        assert unauthenticated.status_code == 401
        token = issue_token(JWT_SECRET, "jeff")
        r = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == 204 and r.content == b""

        assert await memories.list_recent("jeff") == []
        assert await h.redis.exists(keys.history(keys.conversation_tag("c-1"), "jeff")) == 0
        assert all(
            line.user_id != "jeff" and line.to != "jeff" for line in await Transcript(h.redis).recent("c-1")
        )
        late = await h.answer(rpc["id"], result={"events": []})
        assert late.status_code == 410 and late.json()["error"]["code"] == "call_superseded"
        # Someone else's data stays.
        assert [m.text for m in await memories.list_recent("mina")] == ["I like tea"]
        assert await h.redis.exists(keys.history(keys.conversation_tag("c-3"), "mina")) == 1

        again = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
        assert again.status_code == 204  # erasing twice is fine
