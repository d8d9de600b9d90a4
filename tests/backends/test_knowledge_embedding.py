"""Knowledge search by meaning: passages embedded when written, cached by content, fused with words.

The embedding model is a local OpenAI-compatible fake (``tests/fakes/embeddings.py``), never a network
model. The store's tests run on a Redis Cluster too.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.embeddings.openai import OpenAIEmbeddingModel
from pydantic_ai.providers.openai import OpenAIProvider
from redis.asyncio import Redis

from tests.fakes.embeddings import MODEL, FakeEmbeddings
from tests.support import served
from truloop_assistant.backends.knowledge import Bm25KnowledgeBase, KnowledgeBaseError, load_knowledge_base
from truloop_assistant.backends.knowledge.documents import document
from truloop_assistant.backends.knowledge.embedding import PassageEmbedder
from truloop_assistant.backends.knowledge.live import LiveKnowledgeBase
from truloop_assistant.backends.knowledge.store import KnowledgeStore, StoredDocument, folder_id
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.store import keys

PAYROLL = "# Payroll\n\nSalary is paid on the 25th of each month. Payslips appear in Flex on the 24th.\n"
TRAVEL = "# Business travel\n\nThe travel desk has paid your hotel; the daily allowance is paid in cash.\n"
PARKING = "# 주차 안내\n\n방문객 주차권은 1층 안내데스크에서 받아요. 차량 번호를 전날까지 등록하세요.\n"
DOCUMENTS = {"payroll.md": PAYROLL, "travel.md": TRAVEL, "parking.md": PARKING}


@pytest.fixture(autouse=True)
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake only


@pytest.fixture
async def fake() -> AsyncIterator[FakeEmbeddings]:
    async with served(FakeEmbeddings()) as fake:
        yield fake


def stored(path: str, text: str) -> StoredDocument:
    return StoredDocument.of(document(path, text), doc_id=folder_id(path), source="folder")


def live(store: KnowledgeStore) -> LiveKnowledgeBase:
    return LiveKnowledgeBase(store, fallback=lambda: load_knowledge_base(None), check_every_s=0)


async def vector_count(redis: Redis) -> int:
    return int(await redis.hlen(keys.kb_vectors()))


@pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)
async def test_passages_are_embedded_once_by_content(redis: Redis, fake: FakeEmbeddings) -> None:
    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    report = await store.put([stored("payroll.md", PAYROLL), stored("travel.md", TRAVEL)])
    assert (report.documents, report.passages, report.embedded) == (2, 2, 2)
    assert report.embedding_cost is not None and report.embedding_cost.startswith("$")
    assert report.embedding_cost.endswith(" tokens)")  # "$0.000001 (31 tokens)": the price, and the tokens
    assert len(fake.embedded) == 2 and await vector_count(redis) == 2

    # The same documents again: nothing is embedded; one edited passage: only that one.
    again = await store.put([stored("payroll.md", PAYROLL), stored("travel.md", TRAVEL)])
    assert (again.embedded, again.embedding_cost) == (0, "nothing")
    edited = await store.put([stored("payroll.md", PAYROLL.replace("25th", "20th"))])
    assert edited.embedded == 1
    assert len(fake.embedded) == 3 and "20th" in fake.embedded[-1]
    # The vector of the passage as it was is dropped: nothing has it any more.
    assert await vector_count(redis) == 2

    assert await store.remove([folder_id("travel.md")]) == 1
    assert await vector_count(redis) == 1


@pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)
async def test_a_write_embeds_in_batches_and_reports_the_sum(redis: Redis, fake: FakeEmbeddings) -> None:
    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    sections = "\n\n".join(f"## Rule {i}\n\nRule number {i} of the office." for i in range(150))
    report = await store.put([stored("rules.md", f"# Rules\n\n{sections}\n")])
    assert report.embedded == report.passages == 150
    assert [len(inputs) for inputs in fake.requests] == [64, 64, 22]


async def test_documents_written_without_a_model_are_embedded_by_the_next_write(
    redis: Redis, fake: FakeEmbeddings
) -> None:
    await KnowledgeStore(redis).put([stored("payroll.md", PAYROLL)])
    assert fake.requests == [] and await vector_count(redis) == 0
    report = await KnowledgeStore(redis, embedder=PassageEmbedder(fake.model())).put(
        [stored("travel.md", TRAVEL)]
    )
    assert report.embedded == 2  # travel's passage, and payroll's that had none


async def test_a_failing_model_at_write_time_writes_nothing(redis: Redis, fake: FakeEmbeddings) -> None:
    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    fake.fail_with = 500
    with pytest.raises(KnowledgeBaseError, match=r"could not embed the passages .*nothing was written"):
        await store.put([stored("payroll.md", PAYROLL)])
    assert await store.documents() == [] and await store.version() == 0


async def test_meaning_finds_a_paraphrase_that_words_miss(redis: Redis, fake: FakeEmbeddings) -> None:
    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    await store.put(
        [stored("payroll.md", PAYROLL), stored("travel.md", TRAVEL), stored("parking.md", PARKING)]
    )
    base = live(store)
    index = await base.current()
    assert index.has_vectors

    # "payday" is no word of the payroll page; "paid" is in both pages, and words rank travel first
    question = "when do I get paid? is it on payday"
    assert [h.path for h in index.search_sync(question)] == ["travel.md", "payroll.md"]
    hits = await base.search(question)
    assert hits[0].path == "payroll.md"
    assert hits[0].snippet.startswith("Salary is paid on the 25th")
    assert 0 < hits[0].score < 1  # a fused score: a sum of 1 / (60 + rank)
    # words alone find nothing; meaning bridges the languages
    assert index.search_sync("where do visitors park?") == []
    assert [h.path for h in await base.search("where do visitors park?")] == ["parking.md"]
    # a question about nothing in the documents still finds nothing
    assert await base.search("quantum chromodynamics") == []
    assert fake.embedded[-1] == "quantum chromodynamics"  # each question embedded as a query


async def test_a_failing_model_at_search_time_falls_back_to_words(
    redis: Redis, fake: FakeEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    await store.put([stored("payroll.md", PAYROLL), stored("travel.md", TRAVEL)])
    base = live(store)
    question = "when do I get paid? is it on payday"
    words = (await base.current()).search_sync(question)
    assert words[0].path == "travel.md"
    fake.fail_with = 500
    with caplog.at_level(logging.WARNING, logger="truloop_assistant.backends.knowledge.live"):
        assert await base.search(question) == words
    assert "knowledge search by words only, the embedding model did not answer" in caplog.text

    # A model that cannot be reached at all: the same.
    nowhere = OpenAIEmbeddingModel(
        MODEL, provider=OpenAIProvider(base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="sk-test")
    )
    assert await live(KnowledgeStore(redis, embedder=PassageEmbedder(nowhere))).search(question) == words


async def test_without_a_model_nothing_is_embedded(redis: Redis, fake: FakeEmbeddings) -> None:
    store = KnowledgeStore(redis)
    report = await store.put([stored("payroll.md", PAYROLL)])
    assert (report.embedded, report.embedding_cost) == (0, None)
    index = await live(store).current()
    assert not index.has_vectors
    assert [h.path for h in await live(store).search("salary")] == ["payroll.md"]
    assert fake.requests == [] and await vector_count(redis) == 0


async def test_a_folder_is_embedded_on_first_use_and_cached(
    redis: Redis, fake: FakeEmbeddings, tmp_path: Path
) -> None:
    """While Redis holds no documents the folder is searched (the dev server's handbook), by meaning too."""
    (tmp_path / "payroll.md").write_text(PAYROLL, encoding="utf-8")
    (tmp_path / "travel.md").write_text(TRAVEL, encoding="utf-8")

    def folder() -> Bm25KnowledgeBase:
        return Bm25KnowledgeBase.build(tmp_path)

    store = KnowledgeStore(redis, embedder=PassageEmbedder(fake.model()))
    first = LiveKnowledgeBase(store, fallback=folder, check_every_s=0)
    assert [h.path for h in await first.search("when is payday")] == ["payroll.md"]
    assert len(fake.embedded) == 2 + 1  # two passages, one question
    # another process: the folder's vectors come from Redis
    second = LiveKnowledgeBase(store, fallback=folder, check_every_s=0)
    assert [h.path for h in await second.search("when is payday")] == ["payroll.md"]
    assert len(fake.embedded) == 3 + 1
