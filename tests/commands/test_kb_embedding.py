"""``kb index`` and ``kb sync-notion`` embed what they write when ``TRULOOP_EMBEDDING_MODEL`` is set, and
say what it cost; an unchanged passage is not embedded again. The model is the local fake."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.commands.test_kb_eval import MODEL, kb, settings_for
from tests.fakes.embeddings import FakeEmbeddings
from tests.fakes.notion import NOTION_TOKEN, FakeNotion, paragraph
from tests.support import served


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeEmbeddings]:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # to the local fake only
    async with served(FakeEmbeddings()) as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake


COST = r"costing \$0\.0000\d+ \(\d+ tokens\)"


async def test_kb_index_says_what_embedding_cost(
    redis: Redis, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeEmbeddings
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "payroll.md").write_text(
        "# Payroll\n\nSalary is paid on the 25th.\n\n## Payslips\n\nIn Flex.\n", "utf-8"
    )
    settings = settings_for(redis_url, embedding_model=MODEL)
    assert await kb(settings, "index", str(docs)) == 0
    first = capsys.readouterr().out.splitlines()
    assert first[0] == "indexed 1 documents (2 passages) into the knowledge base"
    assert re.fullmatch(rf"embeddings: 2 passages embedded, {COST}", first[1]), first
    assert await kb(settings, "index", str(docs)) == 0
    assert capsys.readouterr().out.splitlines()[1] == "embeddings: 0 passages embedded, costing nothing"
    assert len(fake.embedded) == 2


async def test_kb_sync_notion_embeds_what_it_writes(
    redis: Redis, redis_url: str, capsys: pytest.CaptureFixture[str], fake: FakeEmbeddings
) -> None:
    async with served(FakeNotion()) as notion:
        notion.add_page("Payroll", paragraph("Salary is paid on the 25th of each month."))
        notion.add_page("Parking", paragraph("Visitors get a parking pass at the front desk."))
        settings = settings_for(
            redis_url, embedding_model=MODEL, notion_token=NOTION_TOKEN, notion_api_url=notion.url
        )
        assert await kb(settings, "sync-notion") == 0
        out = capsys.readouterr().out
        assert re.search(rf"^embeddings: 2 passages embedded, {COST}$", out, re.MULTILINE), out
        assert len(fake.embedded) == 2
        notion.add_page("Lunch", paragraph("Bibimbap on Mondays."))
        assert await kb(settings, "sync-notion") == 0
        assert "embeddings: 1 passages embedded, costing $" in capsys.readouterr().out
        assert len(fake.embedded) == 3
