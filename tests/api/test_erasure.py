"""``DELETE /api/v1/agent/me``: a person erases what the server keeps of them, and only of them."""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio import Redis

from tests.pipeline.test_typing import eventually
from tests.support import BOT, JWT_SECRET, ON_STANDALONE_AND_CLUSTER, Harness, signed_in_again
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.memory import RedisMemoryStore
from truloop_assistant.operations.replay import DeadLetters
from truloop_assistant.pipeline.intake import Intake
from truloop_assistant.pipeline.queue import TurnQueue, make_queue
from truloop_assistant.store import keys
from truloop_assistant.store.drains import Drains
from truloop_assistant.store.history import History
from truloop_assistant.store.inbox import Inbox
from truloop_assistant.store.ledger import Ledger
from truloop_assistant.store.transcript import Transcript
from truloop_assistant.store.turns import TurnStore


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
        erasing = time.time()
        r = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
        assert r.status_code == 204 and r.content == b""

        assert await memories.list_recent("jeff") == []
        assert await h.redis.exists(keys.history(keys.conversation_tag("c-1"), "jeff")) == 0
        assert all(
            line.user_id != "jeff" and line.to != "jeff" for line in await Transcript(h.redis).recent("c-1")
        )
        # The tokens they had are refused; signed in again, a late answer is told the call ended.
        revoked = await h.answer(rpc["id"], result={"events": []}, token=token)
        assert revoked.status_code == 401 and revoked.json()["error"]["code"] == "token_revoked"
        token = await signed_in_again("jeff", since=erasing)
        late = await h.answer(rpc["id"], result={"events": []}, token=token)
        assert late.status_code == 410 and late.json()["error"]["code"] == "call_superseded"
        # Someone else's data stays.
        assert [m.text for m in await memories.list_recent("mina")] == ["I like tea"]
        assert await h.redis.exists(keys.history(keys.conversation_tag("c-3"), "mina")) == 1

        again = await h.http.delete("/api/v1/agent/me", headers={"authorization": f"Bearer {token}"})
        assert again.status_code == 204  # erasing twice is fine


SECRETS = (
    "jeff",  # their user id
    "창가 자리",  # a memory
    "jeff-dentist",  # what their phone's calendar said
    "jeff-overheard",  # a line to others in a group
    "jeff-group-turn",  # a turn in a group
    "jeff-dead-letter",  # a message given up after its retries
    "jeff-queued",  # a message waiting in the inbox
    "jeff-unsent",  # a turn whose answer waits in the outbox
    "jeff.kim@example.com",  # their contact details
    "010-1234-5678",
    "mina.park@example.com",  # someone's contact details they looked up
)


async def everything(redis: Redis) -> dict[str, str]:
    """Every key under this deployment's prefix, with its value as text."""
    found: dict[str, str] = {}
    async for raw in redis.scan_iter(match=f"{keys.PREFIX}:*", count=1000):
        key = raw.decode()
        kind = (await redis.type(key)).decode()
        value: Any = kind
        if kind == "string":
            value = await redis.get(key)
        elif kind == "list":
            value = await redis.lrange(key, 0, -1)
        elif kind == "hash":
            value = await redis.hgetall(key)
        elif kind == "set":
            value = await redis.smembers(key)
        elif kind == "zset":
            value = await redis.zrange(key, 0, -1)
        found[key] = _text(value)
    return found


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, dict):
        return " ".join(f"{_text(k)}={_text(v)}" for k, v in value.items())
    if isinstance(value, list | set):
        return " ".join(_text(v) for v in value)
    return str(value)


def kept_by_design(key: str) -> bool:
    """The keys an erasure leaves (see ``operations/erasure.py``): the directory, the ids of settled
    calls, rate-limit counters."""
    return key == keys.user_profiles() or ":settled:" in key or key.startswith(keys.rate_limit_prefix() + ":")


@ON_STANDALONE_AND_CLUSTER
async def test_erasing_me_leaves_nothing_of_me_in_any_conversation_and_replays_skip_me(
    start_server: Any, directory: Any
) -> None:
    async with start_server() as h:  # the offline model
        jeff = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}
        await h.user_says("기억해줘: 나는 창가 자리를 좋아해", channel="c-1")
        await h.replies(1, channel="c-1")
        await h.user_says("mina 연락처 알려줘", channel="c-1")
        await h.user_says("내 전화번호 알려줘", channel="c-1")
        await h.replies(3, channel="c-1")
        await h.user_says("이번 주 일정 알려줘", channel="c-2")
        [rpc] = await h.rpc_requests(1, channel="c-2")
        dentist = {
            "id": "e1",
            "title": "jeff-dentist",
            "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
            "end": {"dateTime": "2026-11-24T11:00:00+09:00"},
        }
        assert (await h.answer(rpc["id"], result={"events": [dentist]})).status_code == 202
        await h.replies(1, channel="c-2")
        group = ["jeff", "mina", BOT]
        await h.user_says("jeff-overheard: lunch?", channel="g-1", members=group)
        await h.user_says("mina-overheard: sure", user="mina", channel="g-1", members=group)
        await h.user_says("jeff-overheard in a group where jeff never asks", channel="g-2", members=group)
        await h.user_says("jeff-group-turn 지금 몇 시야", channel="g-1", members=group, mentions=[BOT])
        await h.replies(1, channel="g-1")
        declared = await h.http.put(
            "/api/v1/agent/client-tools",
            headers=jeff,
            json={"tools": [], "builtin": ["calendar.getEvents"]},
        )
        assert declared.status_code == 200
        # A message every attempt of which fails (a history this version cannot read) is given up.
        await h.redis.set(keys.history(keys.conversation_tag("c-dead"), "jeff"), b"unreadable")
        await h.user_says("jeff-dead-letter 내일 일정", channel="c-dead")
        await h.idle(timeout=30)
        ledger = Ledger(h.redis)
        [dead] = await ledger.dead_letters("c-dead")
        # An answer that cannot be delivered yet waits in the outbox.
        h.sendbird.failures.extend([(503, {})] * 100)
        await h.user_says("jeff-unsent 지금 몇 시야", channel="c-out")
        unsent = keys.outbox(keys.conversation_tag("c-out"))
        await eventually(lambda: h.redis.llen(unsent), timeout=10, what="the answer waits in the outbox")
        # A message waits in an inbox whose drain is busy elsewhere.
        await h.redis.set(keys.owner(keys.conversation_tag("c-q")), "drain:elsewhere", px=60_000)
        await h.user_says("jeff-queued 안녕", channel="c-q")
        assert await h.redis.llen(keys.inbox(keys.conversation_tag("c-q"))) == 1

        before = await everything(h.redis)
        assert [s for s in SECRETS if not any(s in k or s in v for k, v in before.items())] == []

        r = await h.http.delete("/api/v1/agent/me", headers=jeff)
        assert r.status_code == 204
        h.sendbird.failures.clear()

        left = {
            key: value
            for key, value in (await everything(h.redis)).items()
            if not kept_by_design(key) and any(s in key or s in value for s in SECRETS)
        }
        assert left == {}, "\n".join(f"{k}: {v[:300]}" for k, v in left.items())
        lines = await Transcript(h.redis).recent("g-1")
        assert [line.text for line in lines] == ["mina-overheard: sure"]  # another member's line stays

        # A replay of what an operator listed before the erasure does not run it.
        await h.redis.delete(keys.history(keys.conversation_tag("c-dead"), "jeff"))
        [replay] = await replayer(h).replay("c-dead", [dead])
        assert replay.outcome == "sender_erased" and replay.dropped
        await h.redis.delete(keys.owner(keys.conversation_tag("c-q")))  # the other drain is done
        await h.idle()
        assert h.texts("c-dead") == []
        assert await h.redis.llen(keys.inbox(keys.conversation_tag("c-dead"))) == 0


def replayer(h: Harness) -> DeadLetters:
    """What ``truloop-assistant dead-letters replay`` replays with."""
    redis, settings = h.redis, h.settings
    queue = TurnQueue(make_queue(settings.redis_url, settings.queue_name), heartbeat_s=1)
    intake = Intake(Inbox(redis, owner_ttl_s=1), Drains(redis, owner_ttl_s=1), queue)
    store = TurnStore(redis, pending_ttl_s=60, history=History(redis, max_messages=10))
    return DeadLetters(redis, Ledger(redis), intake, store)
