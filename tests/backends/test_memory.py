"""Memory stores: one contract for the Redis default and the Supermemory adapter, then each on its own.

The Redis store ranks in process (BM25), so its ranking is tested for real; Supermemory ranks on its
side, so the adapter is tested for the requests it sends and what it reads from the answers.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from tests.fakes.supermemory import SUPERMEMORY_KEY, FakeSupermemory
from tests.support import served
from truloop_assistant.backends.memory import (
    Memory,
    MemoryBackendError,
    MemoryStore,
    RedisMemoryStore,
    SupermemoryStore,
)
from truloop_assistant.backends.memory.supermemory import container_tag
from truloop_assistant.local.embedded_redis import free_port
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


@pytest.fixture
async def sm(supermemory: FakeSupermemory) -> AsyncIterator[SupermemoryStore]:
    store = SupermemoryStore(
        supermemory.url, SUPERMEMORY_KEY, key_prefix="ta", clock=lambda: datetime(2026, 3, 2, 9, tzinfo=UTC)
    )
    yield store
    await store.aclose()


@pytest.fixture(params=["redis", "supermemory"])
async def store(request: pytest.FixtureRequest, redis: Redis) -> AsyncIterator[MemoryStore]:
    if request.param == "redis":
        yield RedisMemoryStore(redis)
        return
    async with served(FakeSupermemory()) as fake:
        sm = SupermemoryStore(fake.url, SUPERMEMORY_KEY, key_prefix="ta")
        yield sm
        await sm.aclose()


async def _save_all(store: MemoryStore, user: str, texts: list[str]) -> dict[str, str]:
    return {text: (await store.save(user, text)).memory_id for text in texts}


# -- the contract


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
    assert FACTS[0] not in [m.text for m in await store.search("jeff", "강아지 이름")]
    assert [m.text for m in await store.list_recent("jeff")] == [FACTS[1]]
    assert [m.text for m in await store.search("amy", "강아지 이름")] == [amy.text]
    assert await store.forget("jeff", ids[FACTS[0]]) is False  # already gone


async def test_forgetting_another_users_memory_returns_false(store: MemoryStore) -> None:
    amy = await store.save("amy", "my passport number ends in 77")
    assert await store.forget("jeff", amy.memory_id) is False
    assert await store.forget("jeff", "mem_000000000000") is False
    assert [m.memory_id for m in await store.list_recent("amy")] == [amy.memory_id]


# -- Redis: BM25 over the shared tokenizer


class _Clock:
    """A clock that moves a minute forward every time it is read."""

    def __init__(self) -> None:
        self._times: Iterator[datetime] = (
            datetime(2026, 3, 2, 9, tzinfo=UTC) + timedelta(minutes=i) for i in range(1000)
        )

    def __call__(self) -> datetime:
        return next(self._times)


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
async def test_redis_search_finds_the_right_memory_first(redis: Redis, query: str, expected: str) -> None:
    store = RedisMemoryStore(redis)
    await _save_all(store, "jeff", FACTS)
    found = await store.search("jeff", query)
    assert [m.text for m in found] == [expected]  # the others share no term with the query
    assert found[0].score is not None and found[0].score > 0


async def test_redis_ranks_best_first_and_newest_first_among_equals(redis: Redis) -> None:
    store = RedisMemoryStore(redis, clock=_Clock())
    texts = [
        "the charger for the office laptop is in my desk drawer",
        "pack the travel charger",
        "birthday cake from the bakery downstairs",
        "pack the travel charger",
    ]
    saved = [await store.save("jeff", text) for text in texts]

    found = await store.search("jeff", "packing the travel charger")
    assert [m.memory_id for m in found] == [saved[3].memory_id, saved[1].memory_id, saved[0].memory_id]
    scores = [m.score for m in found]
    assert all(isinstance(score, float) for score in scores)
    assert scores[0] == scores[1] > scores[2] > 0
    assert [m.memory_id for m in await store.search("jeff", "packing the travel charger", limit=1)] == [
        saved[3].memory_id
    ]
    assert await store.search("jeff", "dentist appointment") == []
    assert await store.search("jeff", "the") == []  # only a stopword: nothing to match


async def test_redis_keeps_a_bounded_number_of_memories_with_a_ttl(redis: Redis) -> None:
    store = RedisMemoryStore(redis, max_per_user=3)
    for i in range(5):
        await store.save("jeff", f"note {i}")
    assert [m.text for m in await store.list_recent("jeff")] == ["note 4", "note 3", "note 2"]
    assert await redis.hlen(keys.memories("jeff")) == 3  # type: ignore[misc]
    assert await redis.zcard(keys.memory_order("jeff")) == 3
    for key in (keys.memories("jeff"), keys.memory_order("jeff")):
        assert 0 < await redis.ttl(key) <= keys.MEMORY_TTL_S


# -- Supermemory: what the adapter sends


JEFF = container_tag("ta", "jeff")
"""Jeff's container tag in a deployment of the default prefix."""


def _sent(supermemory: FakeSupermemory) -> list[tuple[str, str, Any]]:
    return [(r.method, r.path, r.body) for r in supermemory.requests]


async def test_supermemory_search_request(supermemory: FakeSupermemory, sm: SupermemoryStore) -> None:
    await sm.search("jeff", "강아지 이름이 뭐였지?", limit=3)
    assert _sent(supermemory) == [
        ("POST", "/v3/search", {"q": "강아지 이름이 뭐였지?", "containerTags": [JEFF], "limit": 3})
    ]
    headers = supermemory.requests[0].headers
    assert headers["authorization"] == f"Bearer {SUPERMEMORY_KEY}"
    assert headers["accept"] == "application/json"
    assert headers["content-type"] == "application/json"


async def test_supermemory_save_request(supermemory: FakeSupermemory, sm: SupermemoryStore) -> None:
    memory = await sm.save("jeff", "I like window seats")
    assert _sent(supermemory) == [
        ("POST", "/v3/documents", {"content": "I like window seats", "containerTags": [JEFF]})
    ]
    assert memory == Memory(
        memory_id=next(iter(supermemory.documents)),
        text="I like window seats",
        created_at="2026-03-02T09:00:00+00:00",
    )


@pytest.mark.parametrize("query", ["", "   "])
async def test_supermemory_list_request(
    supermemory: FakeSupermemory, sm: SupermemoryStore, query: str
) -> None:
    await sm.list_recent("jeff", limit=7)
    await sm.search("jeff", query, limit=2)  # an empty query lists instead of searching
    listing = {"containerTags": [JEFF], "sort": "createdAt", "order": "desc"}
    assert _sent(supermemory) == [
        ("POST", "/v3/documents/list", {**listing, "limit": 7}),
        ("POST", "/v3/documents/list", {**listing, "limit": 2}),
    ]
    assert await sm.list_recent("jeff", limit=0) == []
    assert len(supermemory.requests) == 2  # a zero limit asks nothing


async def test_supermemory_forget_checks_the_owner_then_deletes(
    supermemory: FakeSupermemory, sm: SupermemoryStore
) -> None:
    mine = await sm.save("jeff", "I like window seats")
    amy = await sm.save("amy", "I like aisle seats")
    supermemory.requests.clear()

    assert await sm.forget("jeff", amy.memory_id) is False
    assert _sent(supermemory) == [("GET", f"/v3/documents/{amy.memory_id}", None)]  # deleted nothing
    assert amy.memory_id in supermemory.documents

    supermemory.requests.clear()
    assert await sm.forget("jeff", mine.memory_id) is True
    assert _sent(supermemory) == [
        ("GET", f"/v3/documents/{mine.memory_id}", None),
        ("DELETE", f"/v3/documents/{mine.memory_id}", None),
    ]

    supermemory.requests.clear()
    assert await sm.forget("jeff", "a/b c") is False
    assert _sent(supermemory) == [("GET", "/v3/documents/a%2Fb%20c", None)]  # the id stays one segment


# -- Supermemory: one deployment's users, and memories saved under the old tags


def _store(supermemory: FakeSupermemory, prefix: str, *, legacy: bool = False) -> SupermemoryStore:
    return SupermemoryStore(supermemory.url, SUPERMEMORY_KEY, key_prefix=prefix, legacy_tags=legacy)


def _old(supermemory: FakeSupermemory, user: str, text: str, created_at: str) -> str:
    """A memory as saved before tags named the deployment, under ``user_<id>``; its id."""
    doc_id = f"old-{len(supermemory.documents)}"
    supermemory.documents[doc_id] = {
        "id": doc_id, "content": text, "containerTags": [f"user_{user}"], "createdAt": created_at,
    }  # fmt: skip
    return doc_id


async def test_supermemory_deployments_sharing_an_account_keep_their_users_apart(
    supermemory: FakeSupermemory,
) -> None:
    blue, green = _store(supermemory, "blue"), _store(supermemory, "green")
    kept = await blue.save("jeff", "my locker code is 1357")
    assert await green.search("jeff", "locker code") == []
    assert await green.list_recent("jeff") == []
    assert await green.forget("jeff", kept.memory_id) is False
    assert await green.forget_all("jeff") == 0
    assert [m.text for m in await blue.search("jeff", "locker code")] == ["my locker code is 1357"]
    assert kept.memory_id in supermemory.documents
    await blue.aclose()
    await green.aclose()


def test_supermemory_tags_are_ones_supermemory_takes_and_never_the_same_for_two() -> None:
    prefixes = ["ta", "prod.eu:blue", "prod-eu-blue", "a", "a_u", "z" * 32]
    users = ["jeff", "b", "u_b", "jeff@example.com", "사용자", "x" * 200]
    tags = {(p, u): container_tag(p, u) for p in prefixes for u in users}
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,100}", tag) for tag in tags.values()), tags
    assert len(set(tags.values())) == len(tags)  # "a" + "u_b" is not "a_u" + "b", "." is not "-"
    assert container_tag("ta", "jeff") == container_tag("ta", "jeff")


async def test_supermemory_tags_are_accepted_for_any_user_id(supermemory: FakeSupermemory) -> None:
    store = _store(supermemory, "prod.eu")
    for user in ("jeff@example.com", "x" * 200, "사용자"):
        await store.save(user, "I like window seats")
        assert [m.text for m in await store.list_recent(user)] == ["I like window seats"]
    await store.aclose()


async def test_supermemory_memories_under_the_old_tag_are_left_alone_by_default(
    supermemory: FakeSupermemory,
) -> None:
    old = _old(supermemory, "jeff", "my locker code is 1357", "2025-01-01T00:00:00+00:00")
    store = _store(supermemory, "ta")
    assert await store.search("jeff", "locker") == [] and await store.list_recent("jeff") == []
    assert await store.forget("jeff", old) is False and await store.forget_all("jeff") == 0
    assert old in supermemory.documents  # perhaps another deployment's: not ours to read or erase
    await store.aclose()


async def test_supermemory_with_legacy_tags_reads_forgets_and_erases_old_memories_too(
    supermemory: FakeSupermemory,
) -> None:
    old = _old(supermemory, "jeff", "my locker code is 1357", "2025-01-01T00:00:00+00:00")
    _old(supermemory, "amy", "my locker code is 2468", "2025-01-02T00:00:00+00:00")
    store = _store(supermemory, "ta", legacy=True)
    new = await store.save("jeff", "I like window seats")
    assert supermemory.documents[new.memory_id]["containerTags"] == [JEFF]  # new ones: the new tag only

    assert [m.memory_id for m in await store.list_recent("jeff")] == [new.memory_id, old]  # newest first
    assert {m.memory_id for m in await store.search("jeff", "locker")} == {new.memory_id, old}
    assert len(await store.search("jeff", "locker", limit=1)) == 1
    assert await store.forget("amy", old) is False  # another user's old memory stays theirs
    assert await store.forget("jeff", old) is True and old not in supermemory.documents
    _old(supermemory, "jeff", "I take the 8:10 bus", "2025-01-03T00:00:00+00:00")
    assert await store.forget_all("jeff") == 2
    assert [d["content"] for d in supermemory.documents.values()] == ["my locker code is 2468"]
    await store.aclose()


# -- Supermemory: what the adapter reads


async def test_supermemory_search_results_are_read_in_supermemorys_order(
    supermemory: FakeSupermemory, sm: SupermemoryStore
) -> None:
    supermemory.reply(
        {
            "results": [
                {  # content present: the whole document, chunks ignored
                    "documentId": "doc_a",
                    "content": "My favorite coffee is an oat flat white",
                    "chunks": [{"content": "oat flat white", "score": 0.9, "isRelevant": True}],
                    "score": 0.91,
                    "createdAt": "2026-02-01T10:00:00.000Z",
                    "updatedAt": "2026-02-01T10:00:05.000Z",
                    "metadata": None,
                    "title": "Coffee",
                    "type": "text",
                },
                {  # no content: the chunks, in order, skipping malformed ones
                    "documentId": "doc_b",
                    "content": None,
                    "chunks": [
                        {"content": "Coffee beans from", "score": 0.7, "isRelevant": True},
                        {"score": 0.2},
                        "not a chunk",
                        {"content": "the corner roastery", "score": 0.6, "isRelevant": False},
                    ],
                    "score": 1,
                    "createdAt": "2026-02-03T08:30:00.000Z",
                },
                {"documentId": "doc_c", "chunks": []},  # no score, no date
                {"content": "no document id"},
                "not a result",
            ],
            "timing": 87,
            "total": 5,
        }
    )
    found = await sm.search("jeff", "coffee", limit=5)
    assert found == [
        Memory(
            memory_id="doc_a",
            text="My favorite coffee is an oat flat white",
            created_at="2026-02-01T10:00:00.000Z",
            score=0.91,
        ),
        Memory(
            memory_id="doc_b",
            text="Coffee beans from the corner roastery",
            created_at="2026-02-03T08:30:00.000Z",
            score=1.0,
        ),
        Memory(memory_id="doc_c", text="", created_at="", score=None),
    ]


async def test_supermemory_search_keeps_the_limit_and_tolerates_odd_bodies(
    supermemory: FakeSupermemory, sm: SupermemoryStore
) -> None:
    results = [{"documentId": f"doc_{i}", "content": f"note {i}", "score": 1 - i / 10} for i in range(4)]
    supermemory.reply({"results": results, "total": 4})
    assert [m.memory_id for m in await sm.search("jeff", "note", limit=2)] == ["doc_0", "doc_1"]
    for body in ({}, {"results": None}, [], None):
        supermemory.reply(body)
        assert await sm.search("jeff", "note") == []


async def test_supermemory_list_reads_content_then_summary_then_title(
    supermemory: FakeSupermemory, sm: SupermemoryStore
) -> None:
    supermemory.reply(
        {
            "memories": [
                {"id": "doc_1", "content": "I like window seats", "createdAt": "2026-02-03T08:30:00.000Z"},
                {"id": "doc_2", "content": None, "summary": "Prefers aisle seats", "createdAt": "2026-02-02"},
                {"id": "doc_3", "title": "Seats", "status": "queued"},
                {"content": "no id"},
            ],
            "pagination": {"currentPage": 1, "totalItems": 4},
        }
    )
    assert await sm.list_recent("jeff") == [
        Memory(memory_id="doc_1", text="I like window seats", created_at="2026-02-03T08:30:00.000Z"),
        Memory(memory_id="doc_2", text="Prefers aisle seats", created_at="2026-02-02"),
        Memory(memory_id="doc_3", text="Seats", created_at=""),
    ]


@pytest.mark.parametrize("answer", [{"status": "queued"}, {"id": ""}, {"id": 42}, []])
async def test_supermemory_save_needs_a_document_id(
    supermemory: FakeSupermemory, sm: SupermemoryStore, answer: Any
) -> None:
    supermemory.reply(answer)
    with pytest.raises(MemoryBackendError, match="did not return a document id"):
        await sm.save("jeff", "x")


async def test_supermemory_errors_are_memory_backend_errors(supermemory: FakeSupermemory) -> None:
    bad = SupermemoryStore(supermemory.url, "sm_wrong_secret_key", key_prefix="ta")
    with pytest.raises(MemoryBackendError, match="401") as refused:
        await bad.save("jeff", "x")
    assert "sm_wrong_secret_key" not in str(refused.value)
    await bad.aclose()

    store = SupermemoryStore(supermemory.url, SUPERMEMORY_KEY, key_prefix="ta")
    supermemory.reply({"error": "Internal error"}, status=500)
    with pytest.raises(MemoryBackendError, match="HTTP 500: Internal error"):
        await store.search("jeff", "coffee")
    supermemory.reply({"error": {"message": "slow down"}}, status=429)
    with pytest.raises(MemoryBackendError, match="rate limiting"):
        await store.list_recent("jeff")
    await store.aclose()


async def test_supermemory_timeout_and_unreachable() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(hang))
    with pytest.raises(MemoryBackendError, match="in time"):
        await SupermemoryStore("http://sm.test", SUPERMEMORY_KEY, client, key_prefix="ta").search(
            "jeff", "coffee"
        )
    await client.aclose()

    unreachable = SupermemoryStore(f"http://127.0.0.1:{free_port()}", SUPERMEMORY_KEY, key_prefix="ta")
    with pytest.raises(MemoryBackendError, match="could not reach"):
        await unreachable.list_recent("jeff")
    await unreachable.aclose()
