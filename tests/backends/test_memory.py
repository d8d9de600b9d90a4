"""One contract for every MemoryStore: the Redis default and the Supermemory adapter (against a fake)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from redis.asyncio import Redis

from tests.fakes.supermemory import SUPERMEMORY_KEY, FakeSupermemory
from tests.support import serve, served
from truloop_assistant.backends.memory import (
    MemoryBackendError,
    MemoryStore,
    RedisMemoryStore,
    SupermemoryStore,
)
from truloop_assistant.embedded_redis import free_port
from truloop_assistant.store import keys

FACTS = [
    "내 강아지 이름은 보리야",
    "I'm allergic to peanuts",
    "My favorite coffee is an oat flat white",
    "엄마 생일은 3월 14일이야",
    "회사 주차장은 지하 3층이 편해",
]


@pytest.fixture
async def supermemory() -> AsyncIterator[FakeSupermemory]:
    async with served(FakeSupermemory()) as fake:
        yield fake


@pytest.fixture(params=["redis", "supermemory"])
async def store(request: pytest.FixtureRequest, redis: Redis) -> AsyncIterator[MemoryStore]:
    if request.param == "redis":
        yield RedisMemoryStore(redis)
        return
    fake = FakeSupermemory()
    port = free_port()
    async with serve(fake.app(), port):
        sm = SupermemoryStore(f"http://127.0.0.1:{port}", SUPERMEMORY_KEY)
        yield sm
        await sm.aclose()


async def _save_all(store: MemoryStore, user: str, texts: list[str]) -> dict[str, str]:
    return {text: (await store.save(user, text)).memory_id for text in texts}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("강아지 이름이 뭐였지?", FACTS[0]),
        ("엄마 생일이 언제였더라", FACTS[3]),
        ("peanut allergy", FACTS[1]),
        ("what coffee do I like?", FACTS[2]),
        ("주차 어디에 하지", FACTS[4]),
    ],
)
async def test_search_finds_the_right_memory_first(store: MemoryStore, query: str, expected: str) -> None:
    await _save_all(store, "jeff", FACTS)
    found = await store.search("jeff", query)
    assert found, query
    assert found[0].text == expected
    assert found[0].score is not None


async def test_save_returns_the_memory(store: MemoryStore) -> None:
    memory = await store.save("jeff", "I like window seats")
    assert memory.text == "I like window seats" and memory.memory_id and memory.created_at
    if isinstance(store, RedisMemoryStore):
        assert re.fullmatch(r"mem_[0-9a-f]{12}", memory.memory_id)


async def test_empty_query_lists_the_most_recent(store: MemoryStore) -> None:
    await _save_all(store, "jeff", FACTS)
    recent = await store.search("jeff", "", limit=2)
    assert [m.text for m in recent] == [FACTS[4], FACTS[3]]
    assert [m.text for m in await store.list_recent("jeff")] == FACTS[::-1]


async def test_search_respects_the_limit(store: MemoryStore) -> None:
    await _save_all(store, "jeff", [f"travel note {i}: pack the charger" for i in range(4)])
    assert len(await store.search("jeff", "travel charger", limit=2)) == 2


async def test_users_are_isolated(store: MemoryStore) -> None:
    await store.save("jeff", "my locker code is 4821")
    await store.save("amy", "my locker code is 1357")
    assert [m.text for m in await store.search("amy", "locker code")] == ["my locker code is 1357"]
    assert [m.text for m in await store.search("jeff", "locker code")] == ["my locker code is 4821"]
    assert [m.text for m in await store.list_recent("amy")] == ["my locker code is 1357"]
    assert await store.search("bob", "locker code") == []


async def test_forget_removes_only_the_users_own_memory(store: MemoryStore) -> None:
    ids = await _save_all(store, "jeff", FACTS[:2])
    amy = await store.save("amy", "내 강아지 이름은 초코야")

    assert await store.forget("jeff", ids[FACTS[0]]) is True
    assert [m.text for m in await store.search("jeff", "강아지 이름")] == []
    assert [m.text for m in await store.list_recent("jeff")] == [FACTS[1]]
    assert [m.text for m in await store.search("amy", "강아지 이름")] == [amy.text]
    assert await store.forget("jeff", ids[FACTS[0]]) is False  # already gone


async def test_forgetting_another_users_memory_returns_false(store: MemoryStore) -> None:
    amy = await store.save("amy", "my passport number ends in 77")
    assert await store.forget("jeff", amy.memory_id) is False
    assert await store.forget("jeff", "mem_000000000000") is False
    assert [m.memory_id for m in await store.list_recent("amy")] == [amy.memory_id]


# -- Redis specifics


async def test_redis_keeps_a_bounded_number_of_memories_with_a_ttl(redis: Redis) -> None:
    store = RedisMemoryStore(redis, max_per_user=3)
    for i in range(5):
        await store.save("jeff", f"note {i}")
    assert [m.text for m in await store.list_recent("jeff")] == ["note 4", "note 3", "note 2"]
    assert await redis.hlen(keys.memories("jeff")) == 3  # type: ignore[misc]
    assert await redis.zcard(keys.memory_order("jeff")) == 3
    for key in (keys.memories("jeff"), keys.memory_order("jeff")):
        assert 0 < await redis.ttl(key) <= keys.MEMORY_TTL_S


# -- Supermemory specifics


async def test_supermemory_uses_bearer_auth_and_user_container_tags(supermemory: FakeSupermemory) -> None:
    store = SupermemoryStore(supermemory.url, SUPERMEMORY_KEY)
    memory = await store.save("jeff", "I like window seats")
    assert supermemory.documents[memory.memory_id]["containerTags"] == ["user_jeff"]
    assert all(h["authorization"] == f"Bearer {SUPERMEMORY_KEY}" for _, _, h in supermemory.requests)

    amy = await store.save("amy", "I like aisle seats")
    supermemory.requests.clear()
    assert await store.forget("jeff", amy.memory_id) is False
    assert [m for m, _, _ in supermemory.requests] == ["GET"]  # checked the owner, deleted nothing
    assert amy.memory_id in supermemory.documents
    await store.aclose()


async def test_supermemory_errors_are_memory_backend_errors(supermemory: FakeSupermemory) -> None:
    bad = SupermemoryStore(supermemory.url, "sm_wrong_secret_key")
    with pytest.raises(MemoryBackendError, match="401") as refused:
        await bad.save("jeff", "x")
    assert "sm_wrong_secret_key" not in str(refused.value)
    await bad.aclose()

    store = SupermemoryStore(supermemory.url, SUPERMEMORY_KEY)
    supermemory.failures.append(500)
    with pytest.raises(MemoryBackendError, match="HTTP 500"):
        await store.search("jeff", "coffee")
    await store.aclose()


async def test_supermemory_timeout_and_unreachable() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(hang))
    with pytest.raises(MemoryBackendError, match="in time"):
        await SupermemoryStore("http://sm.test", SUPERMEMORY_KEY, client).search("jeff", "coffee")
    await client.aclose()

    unreachable = SupermemoryStore(f"http://127.0.0.1:{free_port()}", SUPERMEMORY_KEY)
    with pytest.raises(MemoryBackendError, match="could not reach"):
        await unreachable.list_recent("jeff")
    await unreachable.aclose()
