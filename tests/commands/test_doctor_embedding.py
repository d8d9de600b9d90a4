"""``doctor`` asks the embedding model when ``TRULOOP_EMBEDDING_MODEL`` is set (the local fake here)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.commands.test_doctor import SECRET, doctor
from tests.fakes.embeddings import DIMENSIONS, FakeEmbeddings
from tests.support import served


@pytest.fixture
async def fake() -> AsyncIterator[FakeEmbeddings]:
    async with served(FakeEmbeddings()) as fake:
        yield fake


def local_env(redis_url: str, **more: str) -> dict[str, str]:
    return {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET, **more}


async def test_the_embedding_model_answers(tmp_path: Path, redis_url: str, fake: FakeEmbeddings) -> None:
    env = local_env(redis_url, TRULOOP_EMBEDDING_MODEL="openai:text-embedding-3-small", **fake.env())
    code, lines = await doctor(tmp_path, **env)
    assert code == 0, lines
    assert lines[3] == (
        f"ok    embedding: openai:text-embedding-3-small answers ({DIMENSIONS} dimensions): "
        "knowledge search by words and meaning"
    )
    assert len(fake.requests) == 1


async def test_a_refused_key_or_an_unreachable_model_fails(
    tmp_path: Path, redis_url: str, fake: FakeEmbeddings
) -> None:
    env = local_env(redis_url, TRULOOP_EMBEDDING_MODEL="openai:text-embedding-3-small", **fake.env())
    code, lines = await doctor(tmp_path, **{**env, "OPENAI_API_KEY": "sk-revoked"})
    assert code == 1, lines
    [line] = [line for line in lines if "embedding:" in line]
    assert line.startswith("FAIL  embedding: openai:text-embedding-3-small does not answer (")
    assert "401" in line
    assert line.endswith(
        "fix TRULOOP_EMBEDDING_MODEL or the provider's key (e.g. OPENAI_API_KEY, OPENAI_BASE_URL); "
        "until then knowledge search goes by words only"
    )

    code, lines = await doctor(tmp_path, **{**env, "OPENAI_API_KEY": ""})
    assert code == 1, lines
    assert any(
        line.startswith("FAIL  embedding: openai:text-embedding-3-small does not answer (") for line in lines
    )


async def test_without_an_embedding_model_there_is_no_embedding_line(tmp_path: Path, redis_url: str) -> None:
    code, lines = await doctor(tmp_path, **local_env(redis_url))
    assert code == 0, lines
    assert not any("embedding" in line for line in lines)
